import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One answer as a test reads it.
public struct Reply: Sendable {
    public let status: Int
    public let data: Data
    public let response: HTTPURLResponse
    /// The body as text (invalid UTF-8 repaired).
    public var text: String { String(decoding: data, as: UTF8.self) }
}

extension URLSession {
    /// One request with a 10 s timeout, answered with its status, body and response.
    ///
    /// ```swift
    /// let reply = try await URLSession.shared.reply("https://api.example.com/users", method: "POST", body: "{}")
    /// ```
    public func reply(_ url: String, method: String = "GET", body: String? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return Reply(status: http.statusCode, data: data, response: http)
    }
}
