import Foundation
import MoonmockCore

/// Requests an API's spec describes, one per operation, built from its examples (else values
/// made from its schemas): what `moonmock drift` sends to both sides when no requests are given.
extension OpenAPIContract {
    public struct SampleRequest: Sendable {
        public let operation: ContractOperation
        public let method: String
        /// Path and query (with the spec's first server's base path).
        public let target: String
        public let headers: [(String, String)]
        public let body: [UInt8]
    }

    public func sampleRequests(seed: UInt64 = 0) -> [SampleRequest] {
        let base = basePaths.first.map { $0.isEmpty ? "" : "/" + $0.joined(separator: "/") } ?? ""
        var out: [SampleRequest] = []
        for item in paths {
            for method in item.operations.keys.sorted() {
                let operation = item.operations[method]!
                var random = SeededRandom(seed: SeededRandom.seed(method + " " + item.template.text, seed))
                func value(_ p: Parameter) -> String {
                    if let example = p.place.value["example"] { return OpenAPIMock.headerText(example) }
                    if let schema = p.schema, let example = documents.resolve(schema).value["example"] { return OpenAPIMock.headerText(example) }
                    guard let schema = p.schema else { return "1" }
                    var sampler = SchemaSampler(documents: documents, direction: .request, seed: random.next())
                    return OpenAPIMock.headerText(sampler.sample(schema))
                }
                var path = ""
                for parts in item.template.segments {
                    path += "/"
                    for part in parts {
                        switch part {
                        case .literal(let l): path += l
                        case .variable(let name):
                            let p = operation.parameters.first { $0.location == "path" && $0.name == name }
                            let text = p.map(value) ?? "1"
                            path += text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text
                        }
                    }
                }
                var query: [String] = []
                var headers: [(String, String)] = []
                for p in operation.parameters where p.required {
                    switch p.location {
                    case "query": query.append("\(p.name)=\(value(p).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
                    case "header": headers.append((p.name, value(p)))
                    default: break
                    }
                }
                var body: [UInt8] = []
                if let requestBody = operation.requestBody, let content = requestBody.child("content"),
                   let type = content.members.map(\.0).sorted(by: { Self.isJSON($0) && !Self.isJSON($1) }).first, Self.isJSON(type),
                   let media = content.child(type) {
                    let example = media.value["example"] ?? media.child("examples")?.members.first.map { documents.resolve($0.1).value["value"] ?? .null }
                    if let example {
                        body = example.encoded()
                    } else if let schema = media.child("schema") {
                        var sampler = SchemaSampler(documents: documents, direction: .request, seed: random.next())
                        body = sampler.sample(schema).encoded()
                    }
                    headers.append(("Content-Type", type))
                }
                out.append(SampleRequest(operation: operation.info, method: method, target: base + (path.isEmpty ? "/" : path) + (query.isEmpty ? "" : "?" + query.joined(separator: "&")),
                                         headers: headers, body: body))
            }
        }
        return out
    }
}
