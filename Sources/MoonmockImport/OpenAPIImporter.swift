import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockYAML

/// An OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML, `$ref`s to other files followed)
/// as a mocks.lua: a rule per operation (the first server's base path before the path,
/// parameters as `:name`), each documented status an answer made as `mock.openapi` makes it (an
/// example, else a body made from the schema, checked with the validator before it is written),
/// the first 2xx the default and the others `mock.variants`. What is not converted is a note.
///
/// ```swift
/// let output = try OpenAPIImporter.convert(file: URL(fileURLWithPath: "petstore.yaml"), options: .init(title: "…"))
/// ```
public enum OpenAPIImporter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A spec in a file: `$ref`s to other files resolve relative to it.
    public static func convert(file: URL, options: ScriptWriter.Options) throws -> ScriptWriter.Output {
        let contract: OpenAPIContract
        do { contract = try OpenAPIContract(file: file) } catch { throw Failure(description: String(describing: error)) }
        return convert(contract, name: file.lastPathComponent, options: options)
    }

    /// A spec's bytes (its `$ref`s stay within it).
    public static func convert(_ data: Data, name: String, options: ScriptWriter.Options) throws -> ScriptWriter.Output {
        let bytes = Array(data)
        let spec: JSONValue
        if bytes.first(where: { $0 > 0x20 }) == UInt8(ascii: "{") {
            do { spec = try JSONValue(parsing: bytes) } catch { throw Failure(description: "\(name): not JSON (\(error))") }
        } else {
            do { spec = try YAMLReader.read(bytes) } catch { throw Failure(description: "\(name): \(error)") }
        }
        let contract: OpenAPIContract
        do { contract = try OpenAPIContract(documents: SpecDocuments(value: spec, uri: "file:///" + name)) } catch {
            throw Failure(description: String(describing: error))
        }
        return convert(contract, name: name, options: options)
    }

    static func convert(_ contract: OpenAPIContract, name: String, options: ScriptWriter.Options) -> ScriptWriter.Output {
        var fixtures = Fixtures()
        var notes: [WriterNote] = contract.notes.map { WriterNote(source: name, message: $0) }
        var rules: [String] = []
        var options = options
        options.exactContentType = false   // a spec's "application/json" needs no header of its own
        let writer = ScriptWriter(options: options)
        let mock = OpenAPIMock(contract: contract)
        let prefix = contract.basePathPrefix
        for item in contract.pathItems {
            let pattern = prefix + routePattern(item.template)
            guard (try? RoutePattern(pattern)) != nil else {
                notes.append(WriterNote(source: "\(name): \(item.template)", message: "the path cannot be written as a route pattern"))
                continue
            }
            if pattern.contains(":_") {
                notes.append(WriterNote(source: "\(name): \(item.template)", message: "a segment mixing text and parameters is matched whole (as \(pattern))"))
            }
            for operation in item.operations {
                let source = "\(name): \(operation.method) \(item.template)"
                let keys = contract.responseKeys(operation)
                guard !keys.isEmpty else {
                    notes.append(WriterNote(source: source, message: "no responses"))
                    continue
                }
                let request = MockRequest(method: operation.method, url: "http://localhost" + pattern.replacingOccurrences(of: ":", with: "_"))
                let key = RuleKey(request, keepHost: false)
                var answers: [(name: String, value: String)] = []
                for status in keys.sorted(by: statusOrder) {
                    let code = Int(status) ?? (status.uppercased().hasSuffix("XX") ? (Int(status.prefix(1)) ?? 2) * 100 : 500)
                    guard (100...599).contains(code) else {
                        notes.append(WriterNote(source: source, message: "response \(status): not an HTTP status (100-599)"))
                        continue
                    }
                    let (response, note) = mock.answer(operation, key: status, status: code, seed: SeededRandom.seed(operation.method + " " + item.template + " " + status))
                    if let note { notes.append(WriterNote(source: source, message: "response \(status): " + note.replacingOccurrences(of: "openapi: ", with: ""))) }
                    let label = status == "default" ? "other" : status
                    // No example: a body made per request from the schema, its own for each URL.
                    if code != 204 && code != 304, let schema = mock.schemaOnlyBody(operation, key: status) {
                        let file = fixtures.path(for: key, extension: "schema.json", bytes: schema.encoded())
                        answers.append((label, schemaHandler(file, status: code, headers: response.headers)))
                        continue
                    }
                    let exchange = RecordedExchange(request: request, status: code, headers: response.headers, body: response.body)
                    answers.append((label, writer.response(exchange, key, &fixtures)))
                }
                guard !answers.isEmpty else { continue }
                var rule = "-- \(operation.method) \(item.template)\(contract.summary(operation).map { ": " + $0.replacingOccurrences(of: "\n", with: " ") } ?? "")\n"
                let respond: String
                if answers.count == 1 {
                    respond = answers[0].value
                } else {
                    let first = answers.first { $0.name.hasPrefix("2") } ?? answers[0]
                    respond = "mock.variants {\n    default = \(LuaLiteral.string(first.name)),\n"
                        + answers.map { "    [\(LuaLiteral.string($0.name))] = \($0.value),\n" }.joined() + "  }"
                }
                rule += "mock.route {\n  method = \(LuaLiteral.string(operation.method)), path = \(LuaLiteral.string(pattern)),\n"
                rule += "  respond = \(respond),\n}\n"
                rules.append(rule)
            }
        }
        var out = "-- \(options.title)\n"
        out += "-- \(rules.count) rule\(rules.count == 1 ? "" : "s"), one per operation; several documented answers are variants "
        out += "(the first 2xx by default):\n-- switch them from the dashboard, PUT /__moonmock/variants/{rule} or activateVariant.\n"
        out += "-- To keep answers checked against the spec while serving: mock.spec(\(LuaLiteral.string(name))).\n"
        if !notes.isEmpty {
            out += "--\n-- Not converted as it is (\(notes.count)):\n"
            for note in notes { out += "--   \(note.source): \(note.message)\n" }
        }
        out += rules.map { "\n" + $0 }.joined()
        return ScriptWriter.Output(script: out, fixtures: fixtures.files, ruleCount: rules.count, notes: notes)
    }

    /// A handler answering a JSON body `mock.schema` makes from `file`, seeded by the request's
    /// path (the same object for the same URL, another for another id).
    static func schemaHandler(_ file: String, status: Int, headers: HTTPHeaders) -> String {
        var options: [String] = []
        if status != 200 { options.append("status = \(status)") }
        let kept = headers.fields.filter { $0.name.lowercased() != "content-type" || !$0.value.lowercased().hasPrefix("application/json") }
        if !kept.isEmpty {
            options.append("headers = { " + kept.map { "\(LuaLiteral.key($0.name)) = \(LuaLiteral.string($0.value))" }.joined(separator: ", ") + " }")
        }
        return "function(req) return mock.json(mock.schema(\(LuaLiteral.string(file)), { seed_key = req.path })"
            + (options.isEmpty ? "" : ", { " + options.joined(separator: ", ") + " }") + ") end"
    }

    /// `/pets/{petId}` → `/pets/:petId`; a segment mixing text and parameters
    /// (`{name}.{ext}`) → one parameter named for them (`:_name_ext`).
    static func routePattern(_ template: String) -> String {
        "/" + template.split(separator: "/").map { segment -> String in
            if segment.hasPrefix("{") && segment.hasSuffix("}") && segment.dropFirst().dropLast().allSatisfy({ $0 != "{" && $0 != "}" }) {
                return ":" + segment.dropFirst().dropLast()
            }
            if segment.contains("{") {
                let names = segment.split(separator: "{", omittingEmptySubsequences: false).dropFirst().compactMap { $0.split(separator: "}").first }
                return ":_" + names.joined(separator: "_")
            }
            return String(segment)
        }.joined(separator: "/")
    }

    /// 2xx first, then the other codes in order, `default` last.
    static func statusOrder(_ a: String, _ b: String) -> Bool {
        func rank(_ s: String) -> (Int, String) { (s == "default" ? 2 : s.hasPrefix("2") ? 0 : 1, s) }
        return rank(a) < rank(b)
    }
}
