import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// The HTTP methods of ``http(_:uri:)``.
public enum HTTPMethod: String, Sendable, CustomStringConvertible {
    case get = "GET", post = "POST", patch = "PATCH", put = "PUT", delete = "DELETE", options = "OPTIONS", head = "HEAD"
    public var description: String { rawValue }
}

/// Matches every request.
///
/// ```swift
/// stub(everything, http(404))
/// ```
public func everything(_ request: URLRequest) -> Bool { true }

/// Matches a URL or path that is, or fits, an RFC 6570 URI template: `https://github.com/kylef/{repository}`,
/// `/kylef/{repository}` (a path matches any host).
///
/// ```swift
/// stub(uri("/{user}/{repository}"), json(["user": "Kyle"]))
/// ```
public func uri(_ uri: String) -> Matcher {
    let template = URITemplate(uri)
    return { request in template.match(MockRequest(request)) != nil }
}

/// Matches a method and a URI template.
///
/// ```swift
/// stub(http(.put, uri: "/kylef/Mockingjay"), json(["description": "Kyle"]))
/// ```
public func http(_ method: HTTPMethod, uri: String) -> Matcher {
    let template = URITemplate(uri)
    return { request in (request.httpMethod ?? "GET") == method.rawValue && template.match(MockRequest(request)) != nil }
}

extension MockRequest {
    /// The request a matcher was given, as Moonmock's templates read one.
    init(_ request: URLRequest) {
        self.init(method: request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "http://localhost/")
    }
}
