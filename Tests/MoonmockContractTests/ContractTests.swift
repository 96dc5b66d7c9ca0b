import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript
import Testing

/// The engine keeping a spec: `Tests/Fixtures/contract` (a 3.0 YAML pet store whose schemas are
/// in a second file, a 3.1 JSON museum) and a script whose rules keep or break it.
@Suite("contract: requests and answers against an OpenAPI spec")
struct ContractTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/contract")

    func engine(_ mode: String = "warn") throws -> Engine {
        let engine = Engine()
        let script = try String(contentsOf: Self.fixtures.appendingPathComponent("mocks.lua"), encoding: .utf8)
            .replacingOccurrences(of: #"mock.spec("petstore.yaml")"#, with: #"mock.spec("petstore.yaml", { mode = "\#(mode)" })"#)
        try engine.loadScript(source: script, name: "mocks.lua", baseDirectory: Self.fixtures.path)
        return engine
    }

    func send(_ engine: Engine, _ method: String, _ target: String, headers: [(String, String)] = [], body: String = "") -> Exchange {
        engine.handle(MockRequest(method: method, url: "http://localhost:8080" + target, headers: HTTPHeaders(headers), body: Array(body.utf8)))
    }

    func messages(_ errors: [JSONValue]?) -> [String] {
        (errors ?? []).map { "\($0["instance_path"]?.stringValue ?? ""): \($0["message"]?.stringValue ?? "")" }
    }

    @Test("a request and an answer that keep the spec: the operation named, no violation")
    func clean() throws {
        let engine = try engine()
        let e = send(engine, "GET", "/v1/pets?limit=5&tags=cat,dog")
        #expect(e.response.status == 200)
        #expect(e.contract?.operation?.id == "listPets")
        #expect(e.contract?.isClean == true, "\(messages(e.contract?.request)) \(messages(e.contract?.response))")
        let entry = try #require(engine.journal.entries().last)
        #expect(entry.contract == .object(["operation": .string("listPets"), "request": .array([]), "response": .array([])]))
        // A literal path wins over a template; the {name}.{ext} template splits at the dot.
        #expect(send(engine, "GET", "/v1/pets/mine").contract?.operation?.id == "myPets")
        let file = send(engine, "GET", "/v1/files/notes.txt")
        #expect(file.contract?.operation?.id == "getFile")
        #expect(file.contract?.isClean == true, "\(messages(file.contract?.response))")
        let pdf = messages(send(engine, "GET", "/v1/files/notes.pdf").contract?.request)
        #expect(pdf.count == 1 && pdf[0].hasPrefix("/path/ext:"), "\(pdf)")
    }

    @Test("request violations: parameter types and bounds, a required header, a body against a schema in another file, readOnly")
    func requestViolations() throws {
        let engine = try engine()
        let list = send(engine, "GET", "/v1/pets?limit=500&tags=cat,fish")
        #expect(list.response.status == 200, "warn mode serves it")
        let errors = messages(list.contract?.request)
        #expect(errors.contains { $0.hasPrefix("/query/limit:") && $0.contains("100") }, "\(errors)")
        #expect(errors.contains { $0.hasPrefix("/query/tags/1:") }, "\(errors)")
        let typed = messages(send(engine, "GET", "/v1/pets?limit=ten").contract?.request)
        #expect(typed.contains { $0.hasPrefix("/query/limit:") && $0.contains("integer") }, "\(typed)")

        let pet = send(engine, "GET", "/v1/pets/7")
        #expect(messages(pet.contract?.request) == ["/header/X-Request-ID: the header parameter X-Request-ID is required"])
        let badID = send(engine, "GET", "/v1/pets/7", headers: [("X-Request-ID", "not-a-uuid")])
        #expect(messages(badID.contract?.request).contains { $0.hasPrefix("/header/X-Request-ID:") && $0.contains("uuid") })
        let notInt = send(engine, "GET", "/v1/pets/abc", headers: [("X-Request-ID", UUID().uuidString)])
        #expect(messages(notInt.contract?.request).contains { $0.hasPrefix("/path/petId:") }, "\(messages(notInt.contract?.request))")

        let json = [("Content-Type", "application/json")]
        let missingName = send(engine, "POST", "/v1/pets", headers: json, body: #"{"id": 9}"#)
        let bodyErrors = messages(missingName.contract?.request)
        #expect(bodyErrors.contains { $0.hasPrefix("/body:") && $0.contains("name") }, "\(bodyErrors)")
        #expect(bodyErrors.contains { $0.hasPrefix("/body/id:") && $0.contains("read-only") }, "\(bodyErrors)")
        #expect(messages(send(engine, "POST", "/v1/pets", headers: json).contract?.request).contains { $0.hasPrefix("/body:") && $0.contains("needs a body") })
        let xml = send(engine, "POST", "/v1/pets", headers: [("Content-Type", "application/xml")], body: "<pet/>")
        #expect(messages(xml.contract?.request).contains { $0.hasPrefix("/header/Content-Type:") && $0.contains("application/xml") })
        let notJSON = send(engine, "POST", "/v1/pets", headers: json, body: "{name")
        #expect(messages(notJSON.contract?.request) == ["/body: the body is not JSON, as application/json says"])
    }

    @Test("response violations: a body against its schema, an undocumented status, a required header, writeOnly")
    func responseViolations() throws {
        let engine = try engine()
        let id = [("X-Request-ID", UUID().uuidString)]
        let broken = send(engine, "GET", "/v1/pets?broken=1")
        #expect(messages(broken.contract?.response).contains { $0.hasPrefix("/body/0/name:") && $0.contains("string") }, "\(messages(broken.contract?.response))")
        let teapot = send(engine, "GET", "/v1/pets/418", headers: id)
        #expect(messages(teapot.contract?.response) == ["/status: status 418 is not documented for getPet (documented: 200, 404)"])
        #expect(send(engine, "GET", "/v1/pets/404", headers: id).contract?.isClean == true)
        let secret = send(engine, "GET", "/v1/pets/5?secret=x", headers: id)
        #expect(messages(secret.contract?.response).contains { $0.hasPrefix("/body/secret:") && $0.contains("write-only") })
        // The schema path points into the file that holds the schema.
        let schemaPath = broken.contract?.response.first?["schema_path"]?.stringValue ?? ""
        #expect(schemaPath.hasPrefix("petstore.yaml#/paths/~1pets/get/responses/200/content/application~1json/schema"), "\(schemaPath)")
        // A required response header missing: a rule without it.
        engine.add(try Rule(method: "GET", pattern: "/v1/pets") { _ in .json(.array([])) })
        #expect(messages(send(engine, "GET", "/v1/pets").contract?.response) == ["/header/X-Total-Count: the header X-Total-Count is required in a 200 answer"])
    }

    @Test("no operation: an unknown path (404 when enforced), a known path with another method (405 with Allow)")
    func noOperation() throws {
        let warn = try engine()
        let extra = send(warn, "GET", "/v1/extra")
        #expect(extra.response.status == 200)
        #expect(extra.contract?.operation == nil)
        #expect(messages(extra.contract?.request) == [": no operation of petstore.yaml has the path /v1/extra"])
        let enforce = try engine("enforce")
        let unknown = send(enforce, "GET", "/v1/extra")
        #expect(unknown.response.status == 404)
        #expect(unknown.response.headers["Content-Type"] == "application/problem+json")
        let put = send(enforce, "PUT", "/v1/pets/7")
        #expect(put.response.status == 405)
        #expect(put.response.headers["Allow"] == "DELETE, GET")
        #expect(send(enforce, "GET", "/__moonmock/health").contract == nil, "the admin API is not the spec's")
    }

    @Test("enforce: a bad request is refused with 400 before any rule runs; a bad answer becomes a 500 naming the rule's line")
    func enforce() throws {
        let engine = try engine("enforce")
        let refused = send(engine, "POST", "/v1/pets", headers: [("Content-Type", "application/json")], body: #"{"name": ""}"#)
        #expect(refused.response.status == 400)
        #expect(refused.ruleID == nil)
        let problem = try JSONValue(parsing: refused.response.body)
        #expect(problem["status"] == .integer(400))
        #expect(problem["operation"] == .string("createPet"))
        #expect(problem["detail"]?.stringValue?.contains("/body/name") == true)
        #expect(engine.scriptRuleSet.rules.first { $0.method == "POST" }?.hits == 0, "the rule did not run")

        let broken = send(engine, "GET", "/v1/pets?broken=1")
        #expect(broken.response.status == 500)
        let body = try JSONValue(parsing: broken.response.body)
        #expect(body["rule"]?.stringValue == "mocks.lua:4", "\(body)")
        #expect(body["detail"]?.stringValue?.contains("/body/0/name") == true)
        #expect(send(engine, "GET", "/v1/pets").response.status == 200)
    }

    @Test("the summary: requests and violations per operation, the operations never reached; a journal clear starts again")
    func summary() throws {
        let engine = try engine()
        _ = send(engine, "GET", "/v1/pets")
        _ = send(engine, "GET", "/v1/pets?broken=1")
        _ = send(engine, "GET", "/v1/extra")
        let summary = engine.contractSummary()
        #expect(summary["violations"] == .integer(2))
        let operations = summary["operations"]?.arrayItems ?? []
        let list = try #require(operations.first { $0["operation"] == .string("listPets") })
        #expect(list["requests"] == .integer(2))
        #expect(list["method"] == .string("GET"))
        #expect(list["path"] == .string("/pets"))
        #expect(list["violations"]?[0]?["direction"] == .string("response"))
        #expect(list["violations"]?[0]?["request_id"] == .integer(2))
        #expect(operations.last?["operation"] == .null, "requests no operation describes, last")
        let uncovered = summary["uncovered"]?.arrayItems?.compactMap(\.stringValue) ?? []
        #expect(uncovered.contains("POST /pets (createPet)"))
        #expect(!uncovered.contains { $0.hasPrefix("GET /pets (") })
        try engine.clearJournal()
        #expect(engine.contractSummary()["violations"] == .integer(0))
    }

    @Test("OpenAPI 3.1 in JSON: type lists, unevaluatedProperties, formats, servers at /")
    func openAPI31() throws {
        let spec = try OpenAPIContract(file: Self.fixtures.appendingPathComponent("museum.json"))
        #expect(spec.operations.map(\.id) == ["getMuseumHours", "createSpecialEvent"])
        func check(_ method: String, _ target: String, body: String = "", response: MockResponse) -> ContractVerdict {
            let request = MockRequest(method: method, url: "http://localhost" + target, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            var verdict = spec.checkRequest(request)!
            spec.checkResponse(response, to: request, &verdict)
            return verdict
        }
        let good = check("GET", "/museum-hours?startDate=2026-12-06", response: .json(.array([.object([
            "date": .string("2026-12-06"), "timeOpen": .string("09:00"), "timeClose": .string("18:00"), "note": .null])])))
        #expect(good.isClean, "\(messages(good.request)) \(messages(good.response))")
        let bad = check("GET", "/museum-hours?startDate=tomorrow&limit=31", response: .json(.array([.object([
            "date": .string("2026-12-06"), "timeOpen": .string("9am"), "timeClose": .string("18:00"), "extra": .integer(1)])])))
        #expect(messages(bad.request).contains { $0.hasPrefix("/query/startDate:") })
        #expect(messages(bad.request).contains { $0.hasPrefix("/query/limit:") })
        #expect(messages(bad.response).contains { $0.hasPrefix("/body/0/timeOpen:") })
        #expect(messages(bad.response).contains { $0.hasPrefix("/body/0/extra:") || $0.contains("extra") }, "\(messages(bad.response))")
        let event = check("POST", "/special-events", body: #"{"name": "Night", "dates": [], "price": 0}"#, response: MockResponse(status: 201))
        #expect(messages(event.request).contains { $0.hasPrefix("/body/dates:") })
        #expect(messages(event.request).contains { $0.hasPrefix("/body/price:") })
    }

    @Test("a spec that cannot be read is a load error naming the script's line; Swagger 1.2 says what is read")
    func badSpecs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try #"{"swagger": "1.2", "paths": {}}"#.write(to: folder.appendingPathComponent("old.json"), atomically: true, encoding: .utf8)
        let engine = Engine()
        #expect { try engine.loadScript(source: "mock.get('/a', mock.text('a'))\nmock.spec('missing.yaml')\n", name: "mocks.lua", baseDirectory: folder.path) } throws: {
            String(describing: $0).contains("mocks.lua:2") && String(describing: $0).contains("'missing.yaml' not found")
        }
        #expect { try engine.loadScript(source: "mock.spec('old.json')\n", name: "mocks.lua", baseDirectory: folder.path) } throws: {
            String(describing: $0).contains("Swagger 1.2 is not read (2.0 and OpenAPI 3.x are)")
        }
        #expect { try engine.loadScript(source: "mock.spec('old.json', { mode = 'strict' })\n", name: "mocks.lua", baseDirectory: folder.path) } throws: {
            String(describing: $0).contains(#"mode must be "warn" or "enforce""#)
        }
    }
}

extension JSONValue {
    var arrayItems: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}
