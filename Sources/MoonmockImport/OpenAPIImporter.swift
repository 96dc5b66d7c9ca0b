import Foundation
import MoonmockCore
import MoonmockYAML

/// An OpenAPI 3.0 or 3.1 document (JSON or YAML) as a mocks.lua: a rule per operation, path
/// parameters as `:name`, each documented status an answer — from `example` / `examples`,
/// else made from the schema — the first 2xx the default and the others `mock.variants`, so a
/// team flips `GET /pets/:id` to its 404 from the dashboard.
///
/// ```swift
/// let output = try OpenAPIImporter.convert(Data(contentsOf: url), name: "petstore.yaml", options: .init(title: "…"))
/// ```
public enum OpenAPIImporter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    public static func convert(_ data: Data, name: String, options: ScriptWriter.Options) throws -> ScriptWriter.Output {
        let bytes = Array(data)
        let spec: JSONValue
        let firstByte = bytes.first { $0 > 0x20 }
        if firstByte == UInt8(ascii: "{") {
            do { spec = try JSONValue(parsing: bytes) } catch { throw Failure(description: "\(name): not JSON (\(error))") }
        } else {
            do { spec = try YAMLReader.read(bytes) } catch { throw Failure(description: "\(name): \(error)") }
        }
        guard let version = spec["openapi"]?.stringValue, version.hasPrefix("3.") else {
            throw Failure(description: "\(name): no \"openapi: 3.x\" field (Swagger 2.0 is not read: convert it to OpenAPI 3 first)")
        }
        guard case .object(let paths)? = spec["paths"] else { throw Failure(description: "\(name): no paths") }
        var generator = SchemaExamples(document: spec)
        var fixtures = Fixtures()
        var notes: [WriterNote] = []
        var rules: [String] = []
        var options = options
        options.exactContentType = false   // a spec's "application/json" needs no header of its own
        let writer = ScriptWriter(options: options)
        for path in paths.keys.sorted() {
            guard case .object(let item)? = paths[path] else { continue }
            let pattern = routePattern(path)
            // A literal segment that reads as pattern syntax (`*x`, `:x`) cannot be written as a path.
            guard path.hasPrefix("/"), (try? RoutePattern(pattern)) != nil,
                  pattern.split(separator: "/").allSatisfy({ !$0.hasPrefix("*") && !($0.hasPrefix("{") && $0.hasSuffix("}")) }),
                  path.split(separator: "/").allSatisfy({ !$0.hasPrefix(":") }) else {
                notes.append(WriterNote(source: "\(name): \(path)", message: "the path cannot be written as a route pattern"))
                continue
            }
            for method in methods where item[method] != nil {
                guard case .object(let operation)? = item[method] else { continue }
                let source = "\(name): \(method.uppercased()) \(path)"
                guard case .object(let responses)? = operation["responses"], !responses.isEmpty else {
                    notes.append(WriterNote(source: source, message: "no responses"))
                    continue
                }
                let request = MockRequest(method: method.uppercased(), url: "http://localhost" + pattern.replacingOccurrences(of: ":", with: "_"))
                let key = RuleKey(request, keepHost: false)
                var answers: [(name: String, value: String)] = []
                for status in responses.keys.sorted(by: statusOrder) {
                    let response = generator.resolve(responses[status]!)
                    let (headers, body) = generator.body(of: response, source: source, &notes)
                    let code = Int(status) ?? (status.uppercased().hasSuffix("XX") ? (Int(status.prefix(1)) ?? 2) * 100 : 500)
                    guard (100...599).contains(code) else {
                        notes.append(WriterNote(source: source, message: "response \(status): not an HTTP status (100-599)"))
                        continue
                    }
                    let exchange = RecordedExchange(request: request, status: code, headers: headers, body: body)
                    answers.append((status == "default" ? "other" : status, writer.response(exchange, key, &fixtures)))
                }
                guard !answers.isEmpty else { continue }
                let summary = operation["summary"]?.stringValue ?? operation["operationId"]?.stringValue
                var rule = "-- \(method.uppercased()) \(path)\(summary.map { ": " + $0.replacingOccurrences(of: "\n", with: " ") } ?? "")\n"
                let respond: String
                if answers.count == 1 {
                    respond = answers[0].value
                } else {
                    let first = answers.first { $0.name.hasPrefix("2") } ?? answers[0]
                    respond = "mock.variants {\n    default = \(LuaLiteral.string(first.name)),\n"
                        + answers.map { "    [\(LuaLiteral.string($0.name))] = \($0.value),\n" }.joined() + "  }"
                }
                rule += "mock.route {\n  method = \(LuaLiteral.string(method.uppercased())), path = \(LuaLiteral.string(pattern)),\n"
                rule += "  respond = \(respond),\n}\n"
                rules.append(rule)
            }
        }
        notes += generator.notes
        var out = "-- \(options.title)\n"
        out += "-- \(rules.count) rule\(rules.count == 1 ? "" : "s"), one per operation; several documented answers are variants "
        out += "(the first 2xx by default):\n-- switch them from the dashboard, PUT /__moonmock/variants/{rule} or activateVariant.\n"
        if !notes.isEmpty {
            out += "--\n-- Not converted (\(notes.count)):\n"
            for note in notes { out += "--   \(note.source): \(note.message)\n" }
        }
        out += rules.map { "\n" + $0 }.joined()
        return ScriptWriter.Output(script: out, fixtures: fixtures.files, ruleCount: rules.count, notes: notes)
    }

    /// `/pets/{petId}` → `/pets/:petId`.
    static func routePattern(_ path: String) -> String {
        "/" + path.split(separator: "/").map { segment -> String in
            if segment.hasPrefix("{") && segment.hasSuffix("}") { return ":" + segment.dropFirst().dropLast() }
            return String(segment)
        }.joined(separator: "/")
    }

    /// 2xx first, then the other codes in order, `default` last.
    static func statusOrder(_ a: String, _ b: String) -> Bool {
        func rank(_ s: String) -> (Int, String) { (s == "default" ? 2 : s.hasPrefix("2") ? 0 : 1, s) }
        return rank(a) < rank(b)
    }
}
