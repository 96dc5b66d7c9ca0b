import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

extension URLRequest {
    /// The request a rule sees, as a `URLRequest`: its URL, method, header fields and body —
    /// for matchers and builders written against `URLRequest` (the migration kits' closures).
    ///
    /// ```swift
    /// moonmock.stub(.request { URLRequest($0).value(forHTTPHeaderField: "X-Debug") != nil }, .text("debug"))
    /// ```
    public init(_ request: MockRequest) {
        self.init(url: URL(string: request.url) ?? URL(string: "http://localhost/")!)
        httpMethod = request.method
        for field in request.headers { addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { httpBody = Data(request.body) }
    }
}
