import Foundation
import MoonmockContract
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
        // Made from the schema, within it: the same on every run.
        if case .integer(let id)? = pets?[0]?["id"] { #expect(id >= 1) } else { Issue.record("id: \(String(describing: pets?[0]?["id"]))") }
        #expect(["dog", "cat"].contains(pets?[0]?["tag"]?.stringValue ?? ""))
        #expect(pets?[0]?["born"]?.stringValue?.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil)
        #expect(pets?[0]?["owner"]?["email"]?.stringValue?.range(of: #"^[a-z0-9._]+@example\.(com|org|net)$"#, options: .regularExpression) != nil,
                "\(String(describing: pets))")
        // Made per request by mock.schema, seeded by the path: the same list for the same URL.
        #expect(pets == (try json(engine, "GET", "/pets").1))
        #expect(try json(engine, "POST", "/pets").1 == .object(["id": .integer(10), "name": .string("Rex"), "tag": .string("dog")]))
        #expect(try json(engine, "POST", "/pets").0 == 201)
        #expect(try json(engine, "GET", "/pets/7").1?["name"] == .string("Rex"))
        try engine.variants.activate("404", for: "GET /pets/:petId")
        let missing = try json(engine, "GET", "/pets/7")
        #expect(missing.0 == 404 && missing.1?["message"]?.stringValue?.isEmpty == false, "\(String(describing: missing.1))")
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
        #expect(order?["id"]?.stringValue?.range(of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#, options: .regularExpression) != nil,
                "\(String(describing: order))")
        #expect(order?["placed"]?.stringValue?.hasSuffix("Z") == true, "\(String(describing: order))")
        // Each id its own order; the same id, the same order.
        #expect(try json(engine, "GET", "/orders/2").1 != order && (try json(engine, "GET", "/orders/1").1) == order)
        #expect(try json(engine, "POST", "/orders").0 == 201)
        try engine.variants.activate("other", for: "GET /orders/:orderId")
        let other = try json(engine, "GET", "/orders/1")
        #expect(other.0 == 500 && other.1?["error"] != nil, "\(String(describing: other.1))")
    }

    @Test("a document that is not OpenAPI 3 or Swagger 2.0 says so")
    func notOpenAPI() throws {
        #expect(throws: OpenAPIImporter.Failure.self) { try OpenAPIImporter.convert(Data(#"{"swagger": "1.2"}"#.utf8), name: "x.json", options: .init(title: "")) }
        #expect(throws: OpenAPIImporter.Failure.self) { try OpenAPIImporter.convert(Data(#"{"info": {}}"#.utf8), name: "x.json", options: .init(title: "")) }
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

@Suite("convert openapi: answers the spec accepts")
struct OpenAPIConvertValidityTests {
    static let contract = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/contract")

    @Test("every answer of every variant validates against its spec, the same script on every run", arguments: ["petstore.yaml", "tricky.yaml", "swagger2.json", "museum.json"])
    func valid(file: String) throws {
        let url = Self.contract.appendingPathComponent(file)
        let output = try OpenAPIImporter.convert(file: url, options: .init(title: "test"))
        #expect(try OpenAPIImporter.convert(file: url, options: .init(title: "test")).script == output.script, "deterministic")
        let folder = try scratchFolder("openapi-valid")
        try output.save(in: folder)
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        let spec = try OpenAPIContract(file: url)
        engine.setContracts([spec], from: .commandLine)
        var checked = 0
        for item in spec.pathItems {
            for operation in item.operations {
                let target = spec.basePathPrefix + item.template.replacingOccurrences(of: "{name}.{ext}", with: "a.txt")
                    .replacingOccurrences(of: "{petId}", with: "7").replacingOccurrences(of: "{id}", with: "7")
                let rule = engine.allRules.first { $0.method == operation.method && $0.pattern.match(MockRequest(method: operation.method, url: "http://localhost" + target)) != nil }
                let variants = rule.flatMap { r in engine.variants.list().first { $0.rule == r.id }?.names } ?? [""]
                for variant in variants {
                    if let rule, !variant.isEmpty { try engine.variants.activate(variant, for: rule.id) }
                    let e = engine.handle(MockRequest(method: operation.method, url: "http://localhost" + target))
                    #expect(e.contract?.response.isEmpty == true, "\(file) \(operation.method) \(target) [\(variant)]: \(String(describing: e.contract?.response)) \(String(decoding: e.response.body, as: UTF8.self))")
                    checked += 1
                }
            }
        }
        #expect(checked >= 2)
    }
}
