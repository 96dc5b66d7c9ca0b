import Foundation
import MoonmockCore
@testable import MoonmockImport
import MoonmockScript
import Testing

/// The writer's choices that keep a replay faithful, one at a time, through the engine that
/// loads what it wrote.
@Suite("Script writer: faithful replay")
struct WriterFidelityTests {
    static func exchange(_ method: String, _ url: String, body: String = "", requestHeaders: [(String, String)] = [],
                         status: Int = 200, headers: [(String, String)] = [("Content-Type", "application/json")],
                         answer: String) -> RecordedExchange {
        RecordedExchange(request: MockRequest(method: method, url: url, headers: HTTPHeaders(requestHeaders), body: Array(body.utf8)),
                         status: status, headers: HTTPHeaders(headers), body: Array(answer.utf8))
    }

    static func engine(_ exchanges: [RecordedExchange], _ configure: (inout ScriptWriter.Options) -> Void = { _ in }) throws -> (Engine, ScriptWriter.Output) {
        var options = ScriptWriter.Options(title: "test")
        configure(&options)
        let output = ScriptWriter(options: options).write(exchanges)
        let folder = try scratchFolder("fidelity")
        try output.save(in: folder)
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        return (engine, output)
    }

    @Test("identical answers stay one rule (fixtures compared by content); different ones for the same request are a sequence")
    func sequencesByContent() throws {
        let big = "[" + String(repeating: #""row","#, count: 60) + #""end"]"#
        let (engine, output) = try Self.engine([
            Self.exchange("GET", "http://a.test/list", answer: big), Self.exchange("GET", "http://a.test/poll", answer: #"{"s":"wait"}"#),
            Self.exchange("GET", "http://a.test/list", answer: big), Self.exchange("GET", "http://a.test/poll", answer: #"{"s":"done"}"#),
        ])
        #expect(output.ruleCount == 2 && output.fixtures.count == 1, "\(output.script)")
        #expect(!output.script.contains("mock.sequence {\n  mock.file"))
        #expect(engine.answer("GET", "http://x/poll").body == Array(#"{"s":"wait"}"#.utf8))
        #expect(engine.answer("GET", "http://x/poll").body == Array(#"{"s":"done"}"#.utf8))
    }

    @Test("requests with different bodies and different answers are rules of their own")
    func byBody() throws {
        let (engine, output) = try Self.engine([
            Self.exchange("POST", "http://a.test/search", body: #"{"q":"cats"}"#, answer: #"{"hits":3}"#),
            Self.exchange("POST", "http://a.test/search", body: #"{"q":"dogs"}"#, answer: #"{"hits":5}"#),
            Self.exchange("POST", "http://a.test/echo", body: "plain one", headers: [("Content-Type", "text/plain")], answer: "1"),
            Self.exchange("POST", "http://a.test/echo", body: "plain two", headers: [("Content-Type", "text/plain")], answer: "2"),
        ])
        #expect(output.ruleCount == 4, "\(output.script)")
        #expect(engine.answer("POST", "http://x/search", body: #"{"q": "dogs"}"#).body == Array(#"{"hits":5}"#.utf8))
        #expect(engine.answer("POST", "http://x/search", body: #"{"q":"cats"}"#).body == Array(#"{"hits":3}"#.utf8))
        #expect(engine.answer("POST", "http://x/echo", body: "plain two").body == Array("2".utf8))
    }

    @Test("--redact-json keeps the body's own bytes around the redacted values")
    func redactInPlace() throws {
        let body = #"{ "z": 1, "token": {"deep": "x"}, "list": [{"token": "s"}, 2.50], "t\u006fken": "esc" }"#
        #expect(JSONRedaction.redact(Array(body.utf8), keys: ["token"]).map { String(decoding: $0, as: UTF8.self) }
                == #"{ "z": 1, "token": "REDACTED", "list": [{"token": "REDACTED"}, 2.50], "t\u006fken": "REDACTED" }"#)
        #expect(JSONRedaction.redact(Array("{\"a\": ".utf8), keys: ["a"]) == nil)
    }

    @Test("Set-Cookie: session-like values redacted, names and attributes kept; --redact-cookie and --keep-cookies")
    func cookies() {
        let writer = ScriptWriter(options: .init(title: "t"))
        #expect(writer.cookie("sessionid=abc; Path=/; Secure") == "sessionid=REDACTED; Path=/; Secure")
        #expect(writer.cookie("prefs=dark; HttpOnly") == "prefs=REDACTED; HttpOnly")
        #expect(writer.cookie("XSRF-TOKEN=t1; Path=/") == "XSRF-TOKEN=t1; Path=/")
        #expect(writer.cookie("theme=dark; Path=/") == "theme=dark; Path=/")
        var options = ScriptWriter.Options(title: "t")
        options.redactCookies = ["theme"]
        #expect(ScriptWriter(options: options).cookie("theme=dark; Path=/") == "theme=REDACTED; Path=/")
        options.keepCookies = true
        #expect(ScriptWriter(options: options).cookie("sessionid=abc") == "sessionid=abc")
    }

    @Test("a page of another origin: mock.cors with credentials, its preflights left to it")
    func crossOrigin() throws {
        let page = [("Origin", "http://app.test:3000"), ("Cookie", "sid=1")]
        let (_, output) = try Self.engine([
            Self.exchange("OPTIONS", "http://api.test/data", requestHeaders: page + [("Access-Control-Request-Method", "GET")], status: 204,
                          headers: [("Access-Control-Allow-Origin", "http://app.test:3000")], answer: ""),
            Self.exchange("GET", "http://api.test/data", requestHeaders: page,
                          headers: [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "http://app.test:3000")], answer: "{}"),
        ])
        #expect(output.script.contains("mock.cors { credentials = true }") && output.ruleCount == 1, "\(output.script)")
        #expect(output.script.contains(#"["Access-Control-Allow-Origin"] = mock.template("{{req.headers.origin}}")"#), "\(output.script)")
    }

    @Test("HAR text bodies go back to their charset; a missing attachment is listed, not turned into an empty body")
    func harCharset() throws {
        let har = #"""
        {"log": {"entries": [
          {"request": {"method": "GET", "url": "http://a.test/export.csv", "headers": []},
           "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/csv; charset=iso-8859-1"}],
                        "content": {"text": "Müller;Köln", "mimeType": "text/csv"}}},
          {"request": {"method": "GET", "url": "http://a.test/gone", "headers": []},
           "response": {"status": 200, "headers": [], "content": {"_file": "abc.txt", "size": 3}}}
        ]}}
        """#
        let (exchanges, notes) = try HARImporter.read(Data(har.utf8), name: "t.har") { _ in nil }
        #expect(exchanges.first?.body == Array("Müller;Köln".data(using: .isoLatin1)!))
        #expect(notes.map(\.message) == ["GET http://a.test/gone: response body: attachment abc.txt not found beside the HAR"])
    }
}
