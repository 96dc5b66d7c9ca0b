import Foundation
import MoonmockCore

/// A stub added with ``Moonmock/stub(_:_:name:)``; pass it to ``Moonmock/removeStub(_:)``.
public struct StubHandle: Sendable, Hashable {
    let rule: Rule
    /// The stub's rule id (its name, or `stub: <matcher>`), as the journal records it.
    public var name: String { rule.id }

    public static func == (a: StubHandle, b: StubHandle) -> Bool { a.rule === b.rule }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(rule)) }
}

extension Moonmock {
    /// Answers requests that `matcher` accepts with `builder`. Stubs are tried before script
    /// rules, newest first (DESIGN §2.1).
    ///
    /// ```swift
    /// let handle = moonmock.stub(.http(.get, uri: "/users/{id}"), .json(["id": 7]))
    /// moonmock.removeStub(handle)
    /// ```
    @discardableResult
    public func stub(_ matcher: StubMatcher, _ builder: StubBuilder, name: String? = nil) -> StubHandle {
        let predicate = Predicate("matches \(matcher)") { req, _ in
            matcher.test(req) == nil ? "does not match \(matcher)" : nil
        }
        let rule = Rule(id: name ?? "stub: \(matcher)", method: matcher.method, pattern: Self.anyPath,
                        predicates: [predicate]) { context in
            builder.build(context.request, matcher.test(context.request) ?? [:])
        }
        engine.add(rule)
        return StubHandle(rule: rule)
    }

    /// Removes one stub; returns whether it was there.
    @discardableResult
    public func removeStub(_ handle: StubHandle) -> Bool { engine.remove(handle.rule) }

    /// Removes every stub (and other runtime rules); script rules stay.
    public func removeAllStubs() { engine.removeRuntimeRules() }

    /// Mocks one endpoint with a JSON file, in one call.
    ///
    /// - Parameters:
    ///   - url: a full URL (`https://api.example.com/users`) or a path (`/users`, any host). The
    ///     scheme does not matter; a query in `url` must match exactly.
    ///   - method: `nil` for any method.
    ///   - jsonFile: a file name in ``fixturesDirectory`` (`.json` may be left out).
    ///   - delay: seconds before the answer.
    ///   - body: only requests whose body matches, e.g. `.graphQL(operationName: "GetUser")`.
    ///
    /// ```swift
    /// try moonmock.mock(url: "https://api.example.com/graphql", method: .post, jsonFile: "user_success",
    ///                   body: .graphQL(operationName: "GetUser"))
    /// ```
    @discardableResult
    public func mock(url: String, method: HTTPMethod? = nil, status: Int = 200, jsonFile: String,
                     delay: TimeInterval = 0, body: BodyMatcher? = nil) throws -> StubHandle {
        var file = jsonFile.hasPrefix("/") ? URL(fileURLWithPath: jsonFile) : fixturesDirectory.appendingPathComponent(jsonFile)
        if !FileManager.default.fileExists(atPath: file.path), file.pathExtension.isEmpty {
            file.appendPathExtension("json")
        }
        return try mock(url: url, method: method, status: status, file: file, delay: delay, body: body)
    }

    /// ``mock(url:method:status:jsonFile:delay:body:)`` with a file URL (any content type).
    @discardableResult
    public func mock(url: String, method: HTTPMethod? = nil, status: Int = 200, file: URL,
                     delay: TimeInterval = 0, body: BodyMatcher? = nil) throws -> StubHandle {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw MoonmockError.fixture("Moonmock: fixture not found: \(file.path)")
        }
        var matcher = Self.urlMatcher(url)
        if let method { matcher = .method(method) && matcher }
        if let body { matcher = matcher && .body(body) }
        var builder = StubBuilder.file(file, status: status)
        if delay > 0 { builder = builder.delayed(by: delay) }
        return stub(matcher, builder, name: "\(method?.rawValue ?? "ANY") \(url)\(body.map { " [\($0)]" } ?? "")")
    }

    /// Matches `url` ignoring the scheme: host, port and path (and the query when given).
    static func urlMatcher(_ url: String) -> StubMatcher {
        let target = MockRequest(method: "GET", url: url.hasPrefix("/") ? "http://any" + url : url)
        let pathOnly = url.hasPrefix("/")
        return StubMatcher("url \(url)") { req in
            if !pathOnly && (req.host != target.host || req.port != target.port) { return nil }
            if req.pathSegments != target.pathSegments { return nil }
            if let query = target.rawQuery, req.rawQuery != query { return nil }
            return [:]
        }
    }

    static let anyPath: RoutePattern = try! RoutePattern("/*")
}
