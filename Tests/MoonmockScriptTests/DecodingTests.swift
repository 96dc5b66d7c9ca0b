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
        #expect(engine.send("POST", "/echo", body: "{broken").text == "null")
        #expect(engine.send("POST", "/echo", body: "[1] trailing").text == "null")
    }
}
