import Foundation
import MoonmockCore
import MoonmockImport
import MoonmockYAML
import MoonmockScript
import Testing

@Suite("OpenAPI to mocks.lua")
struct OpenAPIImportTests {
    static func engine(_ file: String) throws -> (ScriptWriter.Output, Engine) {
        let data = try Data(contentsOf: importFixtures.appendingPathComponent(file))
        let output = try OpenAPIImporter.convert(data, name: file, options: .init(title: "test"))
        let folder = try scratchFolder("openapi")
        try output.save(in: folder)
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        return (output, engine)
    }

    func json(_ engine: Engine, _ method: String, _ path: String) throws -> (Int, JSONValue?) {
        let r = engine.handle(MockRequest(method: method, url: "http://localhost" + path)).response
        return (r.status, try? JSONValue(parsing: r.body))
    }

    @Test("3.0 in YAML: a rule per operation, examples first, answers made from $ref'd schemas, other statuses as variants")
    func yaml30() throws {
        let (output, engine) = try Self.engine("petstore-3.0.yaml")
        #expect(output.ruleCount == 5 && output.notes.isEmpty)
        let (status, pets) = try json(engine, "GET", "/pets?limit=2")
        #expect(status == 200)
        #expect(pets?[0]?["id"] == .integer(1) && pets?[0]?["tag"] == .string("dog") && pets?[0]?["born"] == .string("2026-01-01"))
        #expect(pets?[0]?["owner"]?["email"] == .string("user@example.com") && pets?[0]?["owner"]?["pets"] == .array([]))
        #expect(try json(engine, "POST", "/pets").1 == .object(["id": .integer(10), "name": .string("Rex"), "tag": .string("dog")]))
        #expect(try json(engine, "POST", "/pets").0 == 201)
        #expect(try json(engine, "GET", "/pets/7").1?["name"] == .string("Rex"))
        try engine.variants.activate("404", for: "GET /pets/:petId")
        let missing = try json(engine, "GET", "/pets/7")
        #expect(missing.0 == 404 && missing.1?["message"] == .string("not found"))
        try engine.variants.activate("400", for: "POST /pets")
        #expect(try json(engine, "POST", "/pets").0 == 400)
        #expect(engine.handle(MockRequest(method: "DELETE", url: "http://localhost/pets/7")).response.status == 204)
        let health = engine.handle(MockRequest(method: "GET", url: "http://localhost/health")).response
        #expect(health.body == Array("ok".utf8) && health.headers["content-type"]?.hasPrefix("text/plain") == true)
    }

    @Test("3.1 in JSON: type lists, examples arrays, allOf, oneOf, formats and enums; default responses as the variant 'other'")
    func json31() throws {
        let (output, engine) = try Self.engine("orders-3.1.json")
        #expect(output.ruleCount == 2)
        let (status, order) = try json(engine, "GET", "/orders/1")
        #expect(status == 200)
        #expect(order?["id"] == .string("3fa85f64-5717-4562-b3fc-2c963f66afa6") && order?["status"] == .string("open"))
        #expect(order?["placed"] == .string("2026-01-01T12:00:00Z") && order?["lines"]?[0]?["sku"] == .string("string"))
        #expect(try json(engine, "POST", "/orders").1?["created"] == .bool(true))
        try engine.variants.activate("other", for: "GET /orders/:orderId")
        #expect(try json(engine, "GET", "/orders/1") == (500, .object(["error": .string("boom")])))
    }

    @Test("a document that is not OpenAPI 3 says so")
    func notOpenAPI() throws {
        #expect(throws: OpenAPIImporter.Failure.self) { try OpenAPIImporter.convert(Data(#"{"swagger": "2.0"}"#.utf8), name: "x.json", options: .init(title: "")) }
        #expect(throws: OpenAPIImporter.Failure.self) { try OpenAPIImporter.convert(Data("openapi: [\n".utf8), name: "x.yaml", options: .init(title: "")) }
    }
}

@Suite("YAML reader (libyaml)")
struct YAMLReaderTests {
    @Test("mappings, sequences, typed plain scalars, quoted strings, anchors and aliases")
    func values() throws {
        let yaml = """
        a: 1
        b: -2.5
        c: "3"
        d: true
        e: ~
        f: [x, 'y', 1e3]
        base: &base { k: v }
        copy: *base
        200: numbered key
        """
        let v = try YAMLReader.read(Array(yaml.utf8))
        #expect(v["a"] == .integer(1) && v["b"] == .double(-2.5) && v["c"] == .string("3") && v["d"] == .bool(true) && v["e"] == .null)
        #expect(v["f"] == .array([.string("x"), .string("y"), .double(1000)]))
        #expect(v["copy"] == .object(["k": .string("v")]) && v["200"] == .string("numbered key"))
    }

    @Test("an error names its line; a file of aliases without end is refused")
    func limits() throws {
        do { _ = try YAMLReader.read(Array("a: 1\nb: [1, 2\n".utf8)); Issue.record("read") } catch {
            #expect(String(describing: error).hasPrefix("YAML line "))
        }
        var bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        for n in 1...9 { bomb += "l\(n): &l\(n) [" + Array(repeating: "*" + (n == 1 ? "a" : "l\(n - 1)"), count: 10).joined(separator: ", ") + "]\n" }
        #expect(throws: YAMLReader.Failure.self) { try YAMLReader.read(Array(bomb.utf8)) }
    }
}
