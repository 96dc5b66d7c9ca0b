import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript
import Testing

/// `mock.openapi`: every operation of a spec answered with bodies its schemas accept.
@Suite("mock.openapi: a spec served live")
struct OpenAPIMockTests {
    static let fixtures = ContractTests.fixtures

    func engine(_ script: String) throws -> Engine {
        let engine = Engine()
        try engine.loadScript(source: script, name: "mocks.lua", baseDirectory: Self.fixtures.path)
        return engine
    }

    func send(_ engine: Engine, _ method: String, _ target: String, headers: [(String, String)] = []) -> Exchange {
        engine.handle(MockRequest(method: method, url: "http://localhost:8080" + target, headers: HTTPHeaders(headers)))
    }

    func violations(_ e: Exchange) -> [String] {
        ((e.contract?.request ?? []) + (e.contract?.response ?? [])).map { "\($0["instance_path"]?.stringValue ?? ""): \($0["message"]?.stringValue ?? "")" }
    }

    @Test("the pet store: every operation answers, bodies and headers valid, the same body for the same path")
    func petstore() throws {
        let engine = try engine(#"mock.openapi("petstore.yaml")"#)
        let id = [("X-Request-ID", "6f1c7b9e-2d1a-4c3b-9a8e-1f2e3d4c5b6a")]
        for (method, target) in [("GET", "/v1/pets"), ("GET", "/v1/pets/7"), ("DELETE", "/v1/pets/7"), ("GET", "/v1/pets/mine"), ("GET", "/v1/files/a.txt")] {
            let e = send(engine, method, target, headers: id)
            #expect((200..<300).contains(e.response.status), "\(method) \(target): \(e.response.status)")
            #expect(e.contract?.operation != nil, "\(method) \(target)")
            #expect(violations(e).isEmpty, "\(method) \(target): \(violations(e)) \(String(decoding: e.response.body, as: UTF8.self))")
        }
        let list = send(engine, "GET", "/v1/pets")
        #expect(list.response.headers["X-Total-Count"].flatMap { Int($0) } != nil, "a required header, made from its schema")
        #expect(send(engine, "GET", "/v1/pets").response.body == list.response.body, "the same path, the same body")
        #expect(send(engine, "GET", "/v1/pets/8", headers: id).response.body != send(engine, "GET", "/v1/pets/7", headers: id).response.body)
        // A method the path does not have: 405 with Allow, not 404.
        let put = send(engine, "PUT", "/v1/pets/7")
        #expect(put.response.status == 405)
        #expect(put.response.headers["Allow"] == "DELETE, GET")
        let literal = send(engine, "DELETE", "/v1/pets/mine")
        #expect(literal.response.status == 405, "/pets/mine is its own path, not /pets/{petId}")
        #expect(literal.response.headers["Allow"] == "GET")
        #expect(engine.contractSummary()["uncovered"] == .array([.string("POST /pets (createPet)")]))
    }

    @Test("what importers got wrong: bounds, patterns, enums in allOf, self-reference, oneOf, two JSON types, XML, PNG, examples")
    func tricky() throws {
        let engine = try engine(#"mock.openapi("tricky.yaml")"#)
        for target in ["/bounded", "/tree", "/pets", "/files/report.pdf", "/xml", "/logo", "/examples"] {
            let e = send(engine, "GET", target)
            #expect(e.response.status == 200, "\(target)")
            #expect(violations(e).isEmpty, "\(target): \(violations(e)) \(String(decoding: e.response.body, as: UTF8.self))")
        }
        let bounded = try JSONValue(parsing: send(engine, "GET", "/bounded").response.body)
        #expect(bounded["list"]?.arrayItems?.count ?? 0 >= 3)
        #expect(bounded["secret"] == nil, "writeOnly stays out of answers")
        #expect(["red", "green"].contains(bounded["color"]?.stringValue ?? ""))
        #expect(bounded["code"]?.stringValue?.range(of: #"^[A-Z]{3}-[0-9]{4}$"#, options: .regularExpression) != nil)
        #expect(send(engine, "GET", "/files/a.b").response.headers["Content-Type"] == "application/json", "JSON first, always the same")
        #expect(send(engine, "GET", "/files/a.b", headers: [("Accept", "application/vnd.api+json")]).response.headers["Content-Type"] == "application/vnd.api+json")
        let xml = send(engine, "GET", "/xml").response
        #expect(xml.headers["Content-Type"] == "application/xml")
        #expect(String(decoding: xml.body, as: UTF8.self).hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?><thing>"))
        let png = send(engine, "GET", "/logo").response.body
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 60, "a real PNG")
        #expect(try JSONValue(parsing: send(engine, "GET", "/examples").response.body)["text"] == .string("bonjour"), "the first example by name")
        let hello = send(engine, "GET", "/examples", headers: [("Prefer", "example=hello")])
        #expect(try JSONValue(parsing: hello.response.body)["text"] == .string("hello"))
        let missing = send(engine, "GET", "/examples", headers: [("Prefer", "code=404")])
        #expect(missing.response.status == 404)
        #expect(try JSONValue(parsing: missing.response.body) == .object(["error": .string("not here")]))
        // A spec example that breaks its schema: served, with a note naming it, and reported.
        let broken = send(engine, "GET", "/examples", headers: [("Prefer", "example=broken")])
        #expect(try JSONValue(parsing: broken.response.body)["text"] == .integer(7))
        #expect(engine.journal.entries().last?.logs.contains { $0.contains("example 'broken' of examples breaks its schema") } == true)
        #expect(!(broken.contract?.response.isEmpty ?? true))
    }

    @Test("a rule of the script answers before the spec's, for its operation only")
    func override() throws {
        let engine = try engine(#"""
        mock.openapi("petstore.yaml", { seed = 3 })
        mock.get("/v1/pets/mine", mock.json({ { id = 99, name = "Mine" } }))
        """#)
        #expect(try JSONValue(parsing: send(engine, "GET", "/v1/pets/mine").response.body)[0]?["id"] == .integer(99))
        #expect(send(engine, "GET", "/v1/pets").ruleID == "listPets")
    }
}

@Suite("Swagger 2.0 read as OpenAPI 3.0")
struct Swagger2Tests {
    @Test("checked and served: base path, body and query parameters, examples by media type, x-nullable, files")
    func swagger2() throws {
        let spec = try OpenAPIContract(file: ContractTests.fixtures.appendingPathComponent("swagger2.json"))
        #expect(spec.operations.map(\.id).sorted() == ["createOrder", "listOrders", "receipt"])
        #expect(spec.notes.contains("Swagger 2.0, read as the OpenAPI 3.0 document it describes"))
        let engine = Engine()
        try engine.loadScript(source: #"mock.openapi("swagger2.json")"#, name: "mocks.lua", baseDirectory: ContractTests.fixtures.path)
        let list = engine.handle(MockRequest(method: "GET", url: "http://localhost/api/orders?status=open,shipped&limit=5"))
        #expect(list.response.status == 200)
        #expect(try JSONValue(parsing: list.response.body)[0]?["item"] == .string("lamp"), "the example for application/json")
        #expect(list.contract?.isClean == true, "\(String(describing: list.contract?.json))")
        let bad = engine.handle(MockRequest(method: "GET", url: "http://localhost/api/orders?status=lost&limit=500"))
        #expect(bad.contract?.request.count == 2)
        let created = engine.handle(MockRequest(method: "POST", url: "http://localhost/api/orders", headers: ["Content-Type": "application/json"],
                                                body: Array(#"{"item": "lamp", "quantity": 1}"#.utf8)))
        #expect(created.response.status == 201)
        #expect(created.contract?.isClean == true, "\(String(describing: created.contract?.json)) \(String(decoding: created.response.body, as: UTF8.self))")
        let refused = engine.handle(MockRequest(method: "POST", url: "http://localhost/api/orders", headers: ["Content-Type": "application/json"],
                                                body: Array(#"{"item": "l"}"#.utf8)))
        #expect(refused.contract?.request.count == 2, "minLength and the missing quantity")
        let pdf = engine.handle(MockRequest(method: "GET", url: "http://localhost/api/orders/3/receipt")).response
        #expect(pdf.headers["Content-Type"] == "application/pdf")
        #expect(pdf.body.starts(with: Array("%PDF".utf8)))
    }
}
