import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fails the request with `error`.
///
/// ```swift
/// stub(everything, failure(NSError(domain: NSURLErrorDomain, code: NSURLErrorNotConnectedToInternet)))
/// ```
public func failure(_ error: NSError) -> Builder {
    { _ in .failure(error) }
}

/// A response with this status, header fields and body.
///
/// ```swift
/// stub(everything, http(404))
/// stub(uri("/avatar"), http(200, headers: ["Content-Type": "image/png"], download: .content(png)))
/// ```
public func http(_ status: Int = 200, headers: [String: String]? = nil, download: Download = .noContent) -> Builder {
    { request in
        let url = request.url ?? URL(string: "http://localhost/")!
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers ?? [:])!
        return .success(response, download)
    }
}

/// ``http(_:headers:download:)`` with the status spelled out: `http(status: 404)`.
public func http(status: Int, headers: [String: String]? = nil, download: Download = .noContent) -> Builder {
    http(status, headers: headers, download: download)
}

/// A JSON response from a Foundation object (`[String: Any]`, `[Any]`, …), serialized with
/// sorted keys, `Content-Type: application/json; charset=utf-8` unless `headers` says otherwise.
/// An object JSONSerialization refuses fails the request with the reason.
///
/// ```swift
/// stub(uri("/{user}/{repository}"), json(["user": "Kyle"]))
/// ```
public func json(_ body: Any, status: Int = 200, headers: [String: String]? = nil) -> Builder {
    guard JSONSerialization.isValidJSONObject(body),
          let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .fragmentsAllowed]) else {
        let error = NSError(domain: "MoonmockMockingjay", code: 1,
                            userInfo: [NSLocalizedDescriptionKey: "json(_:): the body cannot be serialized as JSON: \(body)"])
        return failure(error)
    }
    return jsonData(data, status: status, headers: headers)
}

/// JSON bytes as they are (a fixture file's contents, for example).
///
/// ```swift
/// let data = try Data(contentsOf: fixtureURL)
/// stub(everything, jsonData(data))
/// ```
public func jsonData(_ data: Data, status: Int = 200, headers: [String: String]? = nil) -> Builder {
    var fields = ["Content-Type": "application/json; charset=utf-8"]
    for (name, value) in headers ?? [:] {
        fields = fields.filter { $0.key.lowercased() != name.lowercased() }
        fields[name] = value
    }
    return http(status, headers: fields, download: .content(data))
}

/// A redirect to `url`, `301 Moved Permanently` unless `status` says otherwise; URLSession
/// follows it as it follows one from the network.
///
/// ```swift
/// stub(uri("/old"), redirect(URL(string: "https://api.example.com/new")!))
/// ```
public func redirect(_ url: URL, status: Int = 301) -> Builder {
    http(status, headers: ["Location": url.absoluteString])
}

/// ``redirect(_:status:)`` with the target spelled out: `redirect(url: target)`.
public func redirect(url: URL, status: Int = 301) -> Builder {
    redirect(url, status: status)
}
