import Foundation
import MoonmockCore
import MoonmockScript

/// What a Swift stub answers.
///
/// ```swift
/// .json(["id": 7, "name": "Ada"])
/// .text("teapot", status: 418)
/// .http(status: 204, headers: ["X-Trace": "1"])
/// .file(fixturesURL.appendingPathComponent("user.json"))
/// .failure(URLError(.notConnectedToInternet))
/// .json(["ok": true]).delayed(by: 0.5)
/// ```
public struct StubBuilder: Sendable {
    let build: @Sendable (MockRequest, [String: String]) -> MockResponse

    public init(_ build: @escaping @Sendable (MockRequest, [String: String]) -> MockResponse) {
        self.build = build
    }

    /// A JSON body from a Foundation object (`[String: Any]`, `[Any]`, …), serialized now with
    /// sorted keys. An object JSONSerialization refuses answers 500 with the reason.
    public static func json(_ object: Any, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        guard JSONSerialization.isValidJSONObject(object),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]) else {
            let text = "Moonmock: the stub's JSON object cannot be serialized: \(object)"
            return StubBuilder { _, _ in .text(text, status: 500) }
        }
        return jsonData(data, status: status, headers: headers)
    }

    /// A JSON body from a ``JSONValue``.
    public static func json(_ value: JSONValue, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        jsonData(Data(value.encoded()), status: status, headers: headers)
    }

    /// A JSON body from an `Encodable` value.
    public static func json<T: Encodable>(encoding value: T, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else {
            let text = "Moonmock: cannot encode \(T.self) as JSON"
            return StubBuilder { _, _ in .text(text, status: 500) }
        }
        return jsonData(data, status: status, headers: headers)
    }

    /// JSON bytes as they are.
    public static func jsonData(_ data: Data, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        fixed(status, ["Content-Type": "application/json; charset=utf-8"].merging(headers) { _, mine in mine }, data)
    }

    /// A `text/plain` body (`Range` requests get their slice, see ``ByteRanges``).
    public static func text(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        data(Data(text.utf8), status: status, headers: ["Content-Type": "text/plain; charset=utf-8"].merging(headers) { _, mine in mine })
    }

    /// Any status, headers and body; a body offers byte ranges (`Accept-Ranges: bytes`), as
    /// ``text(_:status:headers:)`` and ``file(_:status:headers:)`` do.
    public static func http(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) -> StubBuilder {
        body.isEmpty ? fixed(status, headers, body) : data(body, status: status, headers: headers)
    }

    /// Bytes with the given fields, offering byte ranges unless `headers` says otherwise.
    private static func data(_ body: Data, status: Int, headers: [String: String]) -> StubBuilder {
        fixed(status, ["Accept-Ranges": "bytes"].merging(headers) { _, mine in mine }, body)
    }

    private static func fixed(_ status: Int, _ headers: [String: String], _ body: Data) -> StubBuilder {
        let response = MockResponse(status: status, headers: HTTPHeaders(headers.sorted { $0.key < $1.key }), body: [UInt8](body))
        return StubBuilder { _, _ in response }
    }

    /// A file's bytes, read on every request (so edits show); content type from the extension.
    /// A missing file answers 500 naming it. `Range` requests get their slice.
    public static func file(_ url: URL, status: Int = 200, headers: [String: String] = [:]) -> StubBuilder {
        let fields = HTTPHeaders((["Content-Type": MIMEType.forPath(url.path), "Accept-Ranges": "bytes"]
            .merging(headers) { _, mine in mine }).sorted { $0.key < $1.key })
        return StubBuilder { _, _ in
            guard let data = FileManager.default.contents(atPath: url.path) else {
                return .text("Moonmock: fixture not found: \(url.path)", status: 500)
            }
            return MockResponse(status: status, headers: fields, body: [UInt8](data))
        }
    }

    /// A 3xx with `Location`, `301` unless `status` says otherwise (as Mockingjay's
    /// `redirect`; the script's `mock.redirect` defaults to `302`). Followed as URLSession
    /// follows one from the network.
    public static func redirect(_ location: String, status: Int = 301) -> StubBuilder {
        fixed(status, ["Location": location], Data())
    }

    /// Fails the task with `error`. Over the wire this becomes a connection reset.
    public static func failure(_ error: any Error & Sendable) -> StubBuilder {
        StubBuilder { _, _ in .fault(.error(TransportFailure(error))) }
    }

    /// A response computed per request, from the request and the URI template's captures.
    ///
    /// ```swift
    /// .dynamic { request, params in .json(.object(["id": .string(params["id"] ?? "")])) }
    /// ```
    public static func dynamic(_ build: @escaping @Sendable (MockRequest, [String: String]) -> MockResponse) -> StubBuilder {
        StubBuilder(build)
    }

    /// The same response after `seconds` (a timer; cancelled when the task is).
    public func delayed(by seconds: TimeInterval) -> StubBuilder {
        let build = self.build
        return StubBuilder { request, params in
            var response = build(request, params)
            response.delay = .fixed(seconds * 1000)
            return response
        }
    }
}
