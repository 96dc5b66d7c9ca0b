import MoonmockCore

/// An OpenAPI path template (`/pets/{petId}`, `/files/{name}.{ext}`) matched against a
/// request's path segments.
///
/// ```swift
/// PathTemplate("/files/{name}.{ext}").match(["files", "a.tar.gz"])   // ["name": "a", "ext": "tar.gz"]
/// ```
struct PathTemplate: Sendable {
    enum Part: Sendable, Equatable { case literal(String), variable(String) }

    let text: String
    let segments: [[Part]]
    /// Segments with a variable: the fewer, the more specific (a literal path wins).
    let variableSegments: Int

    init(_ text: String) {
        self.text = text
        var segments: [[Part]] = []
        for raw in text.split(separator: "/", omittingEmptySubsequences: true) {
            var parts: [Part] = []
            var literal = ""
            var rest = Substring(raw)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                literal += rest[..<open]
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                parts.append(.variable(String(rest[rest.index(after: open)..<close])))
                rest = rest[rest.index(after: close)...]
            }
            literal += rest
            if !literal.isEmpty { parts.append(.literal(literal)) }
            segments.append(parts)
        }
        self.segments = segments
        variableSegments = segments.filter { parts in parts.contains { if case .variable = $0 { true } else { false } } }.count
    }

    /// The variables' values (percent-decoded), or `nil` when `path` is not this template.
    func match(_ path: [Substring]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var values: [String: String] = [:]
        for (parts, segment) in zip(segments, path) {
            guard Self.match(parts[...], segment, &values) else { return nil }
        }
        return values
    }

    /// One segment: literals in place, each variable up to the next literal (the last one to the end).
    private static func match(_ parts: ArraySlice<Part>, _ text: Substring, _ values: inout [String: String]) -> Bool {
        guard let first = parts.first else { return text.isEmpty }
        switch first {
        case .literal(let l):
            guard text.hasPrefix(l) else { return false }
            return match(parts.dropFirst(), text.dropFirst(l.count), &values)
        case .variable(let name):
            let rest = parts.dropFirst()
            guard case .literal(let next)? = rest.first else {
                guard !text.isEmpty, rest.isEmpty else { return false }
                values[name] = PercentDecoding.decode(text, plusAsSpace: false)
                return true
            }
            // Try each place the next literal occurs, nearest first.
            var search = text.startIndex
            while let found = text[search...].range(of: next) {
                if found.lowerBound > text.startIndex {
                    var attempt = values
                    attempt[name] = PercentDecoding.decode(text[..<found.lowerBound], plusAsSpace: false)
                    if match(rest, text[found.lowerBound...], &attempt) { values = attempt; return true }
                }
                search = text.index(after: found.lowerBound)
            }
            return false
        }
    }
}
