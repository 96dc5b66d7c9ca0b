import Testing
@testable import MoonmockCore

@Suite("JSON")
struct JSONValueTests {
    func parse(_ s: String) throws -> JSONValue { try JSONValue(parsing: Array(s.utf8)) }
    func text(_ v: JSONValue) -> String { String(decoding: v.encoded(), as: UTF8.self) }

    @Test("integers stay integers, fractions stay doubles")
    func numbers() throws {
        #expect(try parse("[1, -0, 2.5, 1e3, 9223372036854775807, 9223372036854775808]") == .array([
            .integer(1), .integer(0), .double(2.5), .double(1000), .integer(.max), .double(9223372036854775808),
        ]))
        #expect(text(.array([.integer(3), .double(3.5), .double(3)])) == "[3,3.5,3.0]")
    }

    @Test("encoding sorts object keys at every level")
    func deterministic() throws {
        let v = try parse(#"{"b":1,"a":{"z":true,"y":null},"c":[]}"#)
        #expect(text(v) == #"{"a":{"y":null,"z":true},"b":1,"c":[]}"#)
    }

    @Test("strings with escapes, NUL bytes and astral characters survive a round trip")
    func strings() throws {
        let source = #"{"s":"a\u0000b\"c\\d\n\t😀\ud83d\ude00é"}"#
        let v = try parse(source)
        #expect(v["s"] == .string("a\u{0}b\"c\\d\n\t😀😀é"))
        #expect(try parse(text(v)) == v)
        #expect(text(.string("\u{0}\u{1f}")) == #""\u0000\u001f""#)
    }

    @Test("malformed JSON reports where", arguments: [
        ("{\"a\":}", 5), ("[1,]", 3), ("tru", 0), ("{\"a\" 1}", 5), ("[1] x", 4), ("\"abc", 4),
    ])
    func errors(_ input: String, _ offset: Int) {
        let error = #expect(throws: JSONParseError.self) { try parse(input) }
        #expect(error?.offset == offset)
    }

    @Test("deep nesting is refused instead of crashing")
    func depth() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try parse(deep) }
    }

    @Test("operationName is found at the top level only, without decoding the rest", arguments: [
        (#"{"operationName":"GetUser"}"#, "GetUser"),
        (#" { "query": "query { a(x: \"}{\") { b } }", "variables": {"operationName": "Nested", "list": [1, {"x": "]"}]}, "operationName": "Top" }"#, "Top"),
        (#"{"variables":{"operationName":"Nested"}}"#, nil),
        (#"{"operationName":"Get\u0055ser"}"#, "GetUser"),
        (#"{"operationName":null}"#, nil),
        (#"[{"operationName":"Batch"}]"#, nil),
        (#"{"a":1,"operationName":"AfterNumber"}"#, "AfterNumber"),
        (#"{"a":true,"b":[],"operationName":"AfterLiterals"}"#, "AfterLiterals"),
        // Strings are skimmed eight bytes at a time: escapes past the first word, a quote on the
        // last byte of a word, an escaped quote in the value itself, an unterminated string.
        (#"{"query":"0123456789abcdef\"}\\","operationName":"Long"}"#, "Long"),
        (#"{"query":"01234567\"operationName\":\"Fake\"","operationName":"Real"}"#, "Real"),
        (#"{"query":"0123456","operationName":"EndsOnWord","x":"\\"}"#, "EndsOnWord"),
        (#"{"operationName":"0123456789abcdefghij\"k"}"#, "0123456789abcdefghij\"k"),
        (#"{"query":"01234567890123456789"#, nil),
        ("not json", nil),
        // The whole document must be JSON the parser accepts, as for a GraphQL server: a body
        // cut short after the name, a bad literal, number or escape later on, a control
        // character in a string, trailing bytes, nesting past the parser's limit.
        (#"{"operationName":"GetUser","vari"#, nil),
        (#"{"operationName":"GetUser","variables":{"id":tru}}"#, nil),
        (#"{"operationName":"GetUser","variables":{"id":01}}"#, nil),
        (#"{"operationName":"GetUser","variables":{"id":1.}}"#, nil),
        (#"{"operationName":"GetUser","query":"a\x"}"#, nil),
        (#"{"operationName":"GetUser","query":"\uD800\u0041"}"#, nil),
        ("{\"operationName\":\"GetUser\",\"query\":\"01234567\u{01}\"}", nil),
        (#"{"operationName":"GetUser"} x"#, nil),
        (#"{"operationName":"GetUser"}}"#, nil),
        (#"{"operationName":"GetUser","variables":"# + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}", nil),
        (#"{"operationName":"GetUser","variables":"# + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}", "GetUser"),
        (#"{"operationName":"GetUser","variables":{"n":-0.5e+10,"big":1e99,"s":"\uD83D\uDE00\/"},"x":[true,false,null]} "#, "GetUser"),
        // Of duplicate keys the last wins, as when the parser builds the object.
        (#"{"operationName":"First","operationName":"Last"}"#, "Last"),
        (#"{"operationName":"First","operationName":7}"#, nil),
        (#"{"operation\u004eame":"Escaped"}"#, "Escaped"),
        // Past a double's range the parser refuses the body, and so does the skim; below it is 0.
        (#"{"operationName":"Big","n":-2.5e333}"#, nil),
        (#"{"operationName":"Long","n":1"# + String(repeating: "0", count: 400) + "}", nil),
        (#"{"operationName":"Tiny","n":1e-400}"#, "Tiny"),
        (#"{"operationName":"Edge","n":1.5e300}"#, "Edge"),
    ] as [(String, String?)])
    func skim(_ body: String, _ expected: String?) {
        #expect(JSONValue.topLevelString("operationName", in: Array(body.utf8)) == expected)
        #expect(request("POST", "http://h/graphql", body: body).graphQLOperationName == expected)
    }

    @Test("the operationName skim answers as parsing the whole body and reading the key does")
    func skimAgreesWithParser() {
        // Bodies a byte or a few away from GraphQL requests: each is either JSON with the same
        // operationName or no operationName at all, wherever the change lands.
        let seeds = [
            #"{"operationName":"GetUser","variables":{"id":"7","n":[1,-2.5e3,true,null]},"query":"query GetUser($id: ID!) { user(id: $id) { id } }"}"#,
            #"{"query":"{ a(s: \"x\\y\") }","operationName":"A\u00e9\ud83d\ude00","extensions":{}}"#,
            #" {"a":{},"b":[],"operationName":"Z"} "#,
            // Strings longer than the sixteen bytes scanned at a time, with escapes past them.
            #"{"query":"query Long { aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa(x: \"bbbbbbbbbbbbbbbbbbbbb\\n\") }","operationName":"Long0123456789abcdefghij"}"#,
        ].map { Array($0.utf8) }
        #expect(seeds.allSatisfy { (try? JSONValue(parsing: $0)) != nil }, "every seed is JSON")
        let alphabet = Array(#"{}[]:,"\ u0123456789.eE+-tfnrl/aDd"#.utf8) + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC3, 0xFF, 0x0A]
        var random = SystemRandomNumberGenerator()
        var valid = 0
        for _ in 0..<20_000 {
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                case 2: bytes.remove(at: at)
                default: bytes.removeSubrange(at...)
                }
            }
            let parsed = try? JSONValue(parsing: bytes)
            if parsed != nil { valid += 1 }
            let expected: String? = if case .object(let o)? = parsed { o["operationName"]?.stringValue } else { nil }
            let got = JSONValue.topLevelString("operationName", in: bytes)
            #expect(got == expected, "\(String(decoding: bytes, as: UTF8.self))")
            if got != expected { return }
        }
        // Both outcomes were tried many times.
        #expect(valid > 1_000 && valid < 19_000)
    }

    @Test("subset matching explains the first difference")
    func subset() throws {
        let body = try parse(#"{"operationName":"GetUser","variables":{"id":7,"tags":["a"]}}"#)
        #expect(body.contains(try parse(#"{"variables":{"id":7}}"#)))
        #expect(body.contains(try parse(#"{"variables":{"id":7.0}}"#)))
        #expect(!body.contains(try parse(#"{"variables":{"tags":[]}}"#)))
        #expect(body.firstMismatch(try parse(#"{"operationName":"GetViewer"}"#), path: "json")
                == "json.operationName: expected GetViewer, got GetUser")
        #expect(body.firstMismatch(try parse(#"{"missing":1}"#), path: "json") == "json.missing: expected 1, got nothing")
    }

    @Test("a number past Double's range is refused, not read as infinity (which JSON cannot write back)")
    func outOfRange() throws {
        for text in ["1e400", "-1e400", "[1e203900]", "6888888888.88888688888888E888"] {
            #expect(throws: (any Error).self, "\(text)") { try JSONValue(parsing: Array(text.utf8)) }
        }
        #expect(try JSONValue(parsing: Array("1e-400".utf8)) == .double(0))
        #expect(try JSONValue(parsing: Array("1.7976931348623157e308".utf8)) == .double(.greatestFiniteMagnitude))
    }
}
