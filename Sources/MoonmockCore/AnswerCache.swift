/// Answers a rule gave, kept while a version in `mock.state` stays the same: a
/// `mock.resource` list is answered again from here, without a Lua VM, until a write moves the
/// collection's version. Keyed by method, path and query; at most ``limit`` answers per version.
///
/// ```swift
/// let cache = AnswerCache(versionKey: "resource:/pets#version")
/// ```
public final class AnswerCache: Sendable {
    public let versionKey: String
    public static let limit = 64
    private struct Entries {
        var version: StateValue?
        var answers: [String: MockResponse] = [:]
    }
    private let entries = Locked(Entries())

    public init(versionKey: String) { self.versionKey = versionKey }

    /// The version now, and the answer kept for `request` at it (`nil`: none, or no version yet).
    func lookup(_ request: MockRequest, _ state: StateStore) throws -> (version: StateValue?, answer: MockResponse?) {
        guard let version = try state.get(versionKey) else { return (nil, nil) }
        let key = Self.key(request)
        let answer = entries.withLock { e in e.version == version ? e.answers[key] : nil }
        return (version, answer)
    }

    /// Keeps `answer` for `request` at `version` (the one read before the rule ran).
    func store(_ answer: MockResponse, for request: MockRequest, at version: StateValue) {
        guard answer.fault == nil, answer.delay == nil else { return }
        let key = Self.key(request)
        entries.withLock { e in
            if e.version != version { e = Entries(version: version) }
            if e.answers.count < Self.limit { e.answers[key] = answer }
        }
    }

    static func key(_ request: MockRequest) -> String {
        request.method + " " + request.path + (request.rawQuery.map { "?" + $0 } ?? "")
    }
}
