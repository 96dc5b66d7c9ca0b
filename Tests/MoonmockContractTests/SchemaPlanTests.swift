import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockSchema
import Testing

/// `mock.schema`'s compiled plans (and the sampler they fall back to) against the validator, on
/// every JSON answer schema of the specs in the fixtures and the vendored public specs, bundled
/// as `convert openapi` bundles them.
@Suite("mock.schema: values the schemas accept")
struct SchemaPlanTests {
    static var specs: [URL] {
        let root = ContractTests.fixtures.deletingLastPathComponent()
        var files: [URL] = []
        for folder in ["contract", "public-specs"] {
            let base = root.appendingPathComponent(folder)
            let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
            while let url = walker?.nextObject() as? URL {
                if ["yaml", "yml", "json"].contains(url.pathExtension), url.lastPathComponent != "schemas.yaml" { files.append(url) }
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    @Test("every answer schema: planned or sampled, 5 values each, all valid")
    func everyAnswer() throws {
        var planned = 0, sampled = 0
        for file in Self.specs {
            guard let contract = try? OpenAPIContract(file: file) else { continue }
            let mock = OpenAPIMock(contract: contract)
            let version = (try? SpecDocuments(root: file))?.root.value["openapi"]?.stringValue ?? "3.0"   // Swagger 2.0: read as 3.0
            for item in contract.pathItems {
                for operation in item.operations {
                    for key in contract.responseKeys(operation) {
                        guard let bundled = mock.schemaOnlyBody(operation, key: key) else { continue }
                        let documents = SpecDocuments(value: bundled, uri: "file:///bundled.json")
                        let validator = JSONSchema(bundled, draft: version.hasPrefix("3.0") ? .openAPI30 : .draft2020_12,
                                                   baseURI: "file:///bundled.json", assertFormats: true)
                        let plan = SchemaPlan(documents.root, documents: documents)
                        if plan == nil { sampled += 1 } else { planned += 1 }
                        for n in 0..<5 {
                            var random = SeededRandom(seed: UInt64(n))
                            var fake = Fake(seed: UInt64(n) + 100, now: 1_700_000_000)
                            let value: JSONValue
                            if let plan {
                                value = plan.sample(&random, &fake)
                            } else {
                                var sampler = SchemaSampler(documents: documents, direction: .response, seed: UInt64(n), useExamples: false)
                                sampler.fake = fake
                                value = sampler.sample(documents.root)
                            }
                            let errors = validator.validate(value, direction: .response)
                            #expect(errors.isEmpty, "\(file.lastPathComponent) \(operation.method) \(item.template) \(key): \(errors.prefix(3)) in \(String(decoding: value.encoded(), as: UTF8.self).prefix(400))")
                        }
                    }
                }
            }
        }
        #expect(planned >= 20, "planned \(planned), sampled \(sampled)")
    }

    @Test("the same seed, the same value; a plan follows $ref and names, and leaves allOf to the sampler")
    func planShapes() throws {
        let schema = try JSONValue(parsing: Array(#"""
        {"type": "object", "required": ["id", "email", "tags", "owner"], "properties": {
          "id": {"type": "integer", "minimum": 10, "maximum": 12}, "email": {"type": "string"}, "city": {"type": "string"},
          "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 3, "maxItems": 3},
          "owner": {"$ref": "#/$defs/Owner"}, "code": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{3}$"}},
         "$defs": {"Owner": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 40}}}}}
        """#.utf8))
        let documents = SpecDocuments(value: schema)
        let plan = try #require(SchemaPlan(documents.root, documents: documents))
        func draw(_ seed: UInt64) -> JSONValue {
            var random = SeededRandom(seed: seed)
            var fake = Fake(seed: seed)
            return plan.sample(&random, &fake)
        }
        #expect(draw(1) == draw(1) && draw(1) != draw(2))
        let v = draw(3)
        #expect(JSONSchema(schema).validate(v).isEmpty, "\(v)")
        #expect(v["email"]?.stringValue?.contains("@example.") == true && v["owner"]?["name"]?.stringValue?.contains(" ") == true)
        #expect(v["code"]?.stringValue?.range(of: #"^[A-Z]{2}[0-9]{3}$"#, options: .regularExpression) != nil)
        let allOf = SpecDocuments(value: try JSONValue(parsing: Array(#"{"allOf": [{"type": "object"}]}"#.utf8)))
        #expect(SchemaPlan(allOf.root, documents: allOf) == nil)
    }
}
