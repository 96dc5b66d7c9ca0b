import Foundation
import MoonmockCore
@testable import MoonmockSchema

/// The official JSON-Schema-Test-Suite (json-schema-org, vendored in Tests/Fixtures at the
/// commit its VERSION file names): every case of a draft's folder through ``JSONSchema``.
enum TestSuite {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/JSON-Schema-Test-Suite").standardizedFileURL

    struct Result {
        var passed = 0
        var failed: [String] = []
        var total: Int { passed + failed.count }
        var rate: Double { total == 0 ? 0 : Double(passed) / Double(total) }
        /// Cases whose schema compiled to a node tree, and those where the tree's verdict was not the interpreter's.
        var compiled = 0
        var disagreements: [String] = []
    }

    /// The remotes the suite's `$ref`s reach (`http://localhost:1234/...`), from its `remotes` folder.
    static let loader: @Sendable (String) -> JSONValue? = { uri in
        guard uri.hasPrefix("http://localhost:1234/") else { return nil }
        let path = root.appendingPathComponent("remotes").appendingPathComponent(String(uri.dropFirst("http://localhost:1234/".count)))
        guard let data = FileManager.default.contents(atPath: path.path) else { return nil }
        return try? JSONValue(parsing: Array(data))
    }

    /// Runs `folder` (`draft2020-12`, `draft2020-12/optional/format`) as `draft`.
    static func run(_ folder: String, _ draft: JSONSchema.Draft, formats: Bool, only: String? = nil) -> Result {
        var result = Result()
        let directory = root.appendingPathComponent("tests").appendingPathComponent(folder)
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") && (only == nil || $0 == only) }.sorted()
        for file in files {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path),
                  case .array(let groups)? = try? JSONValue(parsing: Array(data)) else { continue }
            for group in groups {
                guard let schemaValue = group["schema"], case .array(let tests)? = group["tests"] else { continue }
                let schema = JSONSchema(schemaValue, draft: draft, assertFormats: formats, loader: loader)
                for test in tests {
                    guard let data = test["data"], case .bool(let expected)? = test["valid"] else { continue }
                    let valid = schema.isValid(data)
                    let name = "\(folder)/\(file): \(group["description"]?.stringValue ?? "?") / \(test["description"]?.stringValue ?? "?")"
                    // The compiled tree and the interpreter must agree, case by case.
                    if let node = schema.compiled(at: schema.baseURI) {
                        result.compiled += 1
                        var context = Context(schema: schema, direction: .none)
                        context.scope.append(schema.baseURI)
                        context.annotations = schema.usesUnevaluated
                        let interpreted = schema.evaluate(schemaValue, data, base: schema.baseURI, instancePath: "", schemaPath: "", &context).valid
                        if node.valid(data, schema, .none) != interpreted { result.disagreements.append(name) }
                    }
                    if valid == expected { result.passed += 1 } else { result.failed.append(name) }
                }
            }
        }
        return result
    }
}
