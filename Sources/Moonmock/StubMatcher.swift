import Foundation
import MoonmockCore

/// Which requests a Swift stub answers. Combine with `&&`, `||` and `!`.
///
/// ```swift
/// moonmock.stub(.http(.put, uri: "/{user}/{repo}"), .json(["ok": true]))
/// moonmock.stub(.uri("https://api.example.com/users/{id}") && .header("Authorization"), .http(status: 401))
/// moonmock.stub(.request { $0.url.contains("/legacy/") }, .text("gone", status: 410))
/// ```
public struct StubMatcher: Sendable, CustomStringConvertible {
    /// Returns the captured parameters when the request matches, else `nil`.
    let test: @Sendable (MockRequest) -> [String: String]?
    /// The method when the matcher requires exactly one (lets the engine index the stub).
    let method: String?
    public let description: String

    public init(_ description: String, method: String? = nil, test: @escaping @Sendable (MockRequest) -> [String: String]?) {
        self.description = description
        self.method = method
        self.test = test
    }

    /// Every request.
    public static let everything = StubMatcher("everything") { _ in [:] }

    /// An RFC 6570 level-1 URI template (``URITemplate``); path-only templates match any host.
    public static func uri(_ template: String) -> StubMatcher {
        let t = URITemplate(template)
        return StubMatcher("uri \(template)") { t.match($0) }
    }

    /// A method and a URI template.
    public static func http(_ method: HTTPMethod, uri template: String) -> StubMatcher {
        let t = URITemplate(template)
        let m = method.rawValue
        return StubMatcher("\(m) \(template)", method: m) { req in req.method == m ? t.match(req) : nil }
    }

    /// Requests with this method.
    public static func method(_ method: HTTPMethod) -> StubMatcher {
        let m = method.rawValue
        return StubMatcher("method \(m)", method: m) { $0.method == m ? [:] : nil }
    }

    /// Requests to this host (case-insensitive).
    public static func host(_ host: String) -> StubMatcher {
        let h = host.lowercased()
        return StubMatcher("host \(h)") { $0.host == h ? [:] : nil }
    }

    /// Requests whose path is exactly `path`.
    public static func path(_ path: String) -> StubMatcher {
        StubMatcher("path \(path)") { $0.path == path ? [:] : nil }
    }

    /// Requests with this header (any value when `value` is `nil`).
    public static func header(_ name: String, _ value: String? = nil) -> StubMatcher {
        StubMatcher("header \(name)\(value.map { ": " + $0 } ?? "")") { req in
            guard let v = req.headers[name] else { return nil }
            return value == nil || v == value ? [:] : nil
        }
    }

    /// Requests with this query item (any value when `value` is `nil`).
    public static func query(_ name: String, _ value: String? = nil) -> StubMatcher {
        StubMatcher("query \(name)\(value.map { "=" + $0 } ?? "")") { req in
            guard let v = req.query(name) else { return nil }
            return value == nil || v == value ? [:] : nil
        }
    }

    /// Requests whose body satisfies `matcher` (see ``BodyMatcher``).
    public static func body(_ matcher: BodyMatcher) -> StubMatcher {
        StubMatcher("body \(matcher.description)") { matcher.test($0.body, $0.json) ? [:] : nil }
    }

    /// Any predicate over the request as Moonmock sees it.
    public static func request(_ description: String = "custom", _ test: @escaping @Sendable (MockRequest) -> Bool) -> StubMatcher {
        StubMatcher(description) { test($0) ? [:] : nil }
    }

    public static func && (a: StubMatcher, b: StubMatcher) -> StubMatcher {
        StubMatcher("\(a) && \(b)", method: a.method ?? b.method) { req in
            guard let x = a.test(req), let y = b.test(req) else { return nil }
            return x.merging(y) { first, _ in first }
        }
    }

    public static func || (a: StubMatcher, b: StubMatcher) -> StubMatcher {
        StubMatcher("(\(a) || \(b))", method: a.method == b.method ? a.method : nil) { a.test($0) ?? b.test($0) }
    }

    public static prefix func ! (a: StubMatcher) -> StubMatcher {
        StubMatcher("!(\(a))") { a.test($0) == nil ? [:] : nil }
    }
}

/// HTTP methods for ``StubMatcher/http(_:uri:)``.
public enum HTTPMethod: String, Sendable {
    case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE", head = "HEAD", options = "OPTIONS"
}

/// A predicate over a request body.
///
/// ```swift
/// .json { $0["operationName"] == .string("GetUser") }   // an object, or any element of an array
/// .graphQL(operationName: "GetUser")
/// ```
public struct BodyMatcher: Sendable, CustomStringConvertible {
    let test: @Sendable ([UInt8], JSONValue?) -> Bool
    public let description: String

    public init(_ description: String, test: @escaping @Sendable ([UInt8], JSONValue?) -> Bool) {
        self.description = description
        self.test = test
    }

    /// The body is a JSON object satisfying `predicate`, or an array with an element that does.
    public static func json(_ description: String = "json", _ predicate: @escaping @Sendable (JSONValue) -> Bool) -> BodyMatcher {
        BodyMatcher(description) { _, json in
            switch json {
            case .array(let items)?: return items.contains(where: predicate)
            case let value?: return predicate(value)
            case nil: return false
            }
        }
    }

    /// A GraphQL body (single or batched) with this `operationName`.
    public static func graphQL(operationName: String) -> BodyMatcher {
        json("operationName \(operationName)") { $0["operationName"] == .string(operationName) }
    }

    /// The raw body bytes satisfy `predicate`.
    public static func data(_ description: String = "data", _ predicate: @escaping @Sendable (Data) -> Bool) -> BodyMatcher {
        BodyMatcher(description) { body, _ in predicate(Data(body)) }
    }
}
