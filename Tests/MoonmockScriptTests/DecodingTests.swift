import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("req.json decoding")
struct DecodingTests {
    @Test("req.json decoded straight into Lua equals the Swift decoder's result")
    func directDecoding() throws {
        let (engine, _) = try makeEngine("""
        mock.post("/echo", function(req) return mock.json.encode(req.json) end)
        mock.route { method = "POST", path = "/subset", json = { kind = "x" }, respond = function(req) return mock.json.encode(req.json) end }
        """)
        let body = #"{"a":[1,-2.5,1e3,true,false,null,"s\n\u00e9",[],{}],"kind":"x","nested":{"deep":{"n":9007199254740993}}}"#
        let direct = engine.send("POST", "/echo", body: body).text          // the Lua decoder
        let viaSwift = engine.send("POST", "/subset", body: body).text      // decoded by Swift for the predicate first
        #expect(direct == viaSwift)
        #expect(direct == #"{"a":[1,-2.5,1000.0,true,false,null,"s\né",[],{}],"kind":"x","nested":{"deep":{"n":9007199254740993}}}"#)
        // A repeated key: the last one wins, on both paths; wide objects keep every key.
        let repeated = #"{"kind":"x","k":1,"k":2,"m":{"x":1,"x":"y"}}"#
        #expect(engine.send("POST", "/echo", body: repeated).text == #"{"k":2,"kind":"x","m":{"x":"y"}}"#)
        #expect(engine.send("POST", "/subset", body: repeated).text == #"{"k":2,"kind":"x","m":{"x":"y"}}"#)
        let wide = "{" + (0..<300).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"kind\":\"x\"}"
        let wideOut = try JSONValue(parsing: Array(engine.send("POST", "/echo", body: wide).text.utf8))
        #expect(wideOut["k0"] == .integer(0) && wideOut["k299"] == .integer(299) && wideOut["kind"] == .string("x"))
        // Deep and long: the stack is checked per container and per eight keys, not per value.
        let deepArrays = String(repeating: "[", count: 100) + "1" + String(repeating: "]", count: 100)
        let deepObjects = String(repeating: #"{"a":"#, count: 100) + "true" + String(repeating: "}", count: 100)
        let list = "[" + (0..<2000).map { #"{"i":\#($0),"s":"v\#($0)"}"# }.joined(separator: ",") + "]"
        let big = #"{"kind":"x","deep":\#(deepArrays),"objects":\#(deepObjects),"list":\#(list)}"#
        let bigDirect = engine.send("POST", "/echo", body: big).text
        #expect(bigDirect == engine.send("POST", "/subset", body: big).text)
        #expect(bigDirect.contains(deepArrays) && bigDirect.contains(#"{"i":1999,"s":"v1999"}]"#))
        #expect(engine.send("POST", "/echo", body: "{broken").text == "null")
        #expect(engine.send("POST", "/echo", body: "[1] trailing").text == "null")
    }
}
