import Foundation
import MoonmockCore

/// One logged request, as handed to a logging callback.
public struct LoggedRequest: Sendable {
    public let method: String
    public let url: String
    public let headers: HTTPHeaders
    public let body: Data
    /// The status answered (0 for a fault), or `nil` when the request passed through.
    public let status: Int?
    /// The rule that answered, `nil` when none did.
    public let ruleID: String?
}

/// How much the in-process transport logs, about which URLs, and where to.
///
/// ```swift
/// moonmock.logging = .compact                                   // method, URL, body to stderr
/// moonmock.logging = .verbose.only(["api.example.com/users"])   // plus headers, some URLs only
/// moonmock.logging = .callback { entry in lines.append(entry.url) }
/// ```
public struct RequestLogging: Sendable {
    public enum Mode: Sendable, Equatable {
        case none
        /// Method, URL, status and body.
        case compact
        /// Compact plus the request headers.
        case verbose
    }

    public var mode: Mode
    /// Log only requests whose URL contains one of these strings; `nil` logs every request.
    public var urls: [String]?
    /// Receives each entry instead of stderr: on the thread that answers the request (not the
    /// session's queue), before the response reaches the task.
    public var callback: (@Sendable (LoggedRequest) -> Void)?

    public init(mode: Mode, urls: [String]? = nil, callback: (@Sendable (LoggedRequest) -> Void)? = nil) {
        self.mode = mode
        self.urls = urls
        self.callback = callback
    }

    public static let none = RequestLogging(mode: .none)
    public static let compact = RequestLogging(mode: .compact)
    public static let verbose = RequestLogging(mode: .verbose)

    /// Every request goes to `callback` (with the detail of `mode`).
    public static func callback(_ mode: Mode = .verbose, _ callback: @escaping @Sendable (LoggedRequest) -> Void) -> RequestLogging {
        RequestLogging(mode: mode, callback: callback)
    }

    /// The same logging limited to URLs containing one of `urls`.
    public func only(_ urls: [String]) -> RequestLogging {
        RequestLogging(mode: mode, urls: urls, callback: callback)
    }

    func log(_ request: MockRequest, status: Int?, ruleID: String?) {
        guard mode != .none else { return }
        if let urls, !urls.contains(where: { request.url.contains($0) }) { return }
        let headers = mode == .verbose ? request.headers : HTTPHeaders()
        let entry = LoggedRequest(method: request.method, url: request.url, headers: headers, body: Data(request.body),
                                  status: status, ruleID: ruleID)
        if let callback { callback(entry); return }
        FileHandle.standardError.write(Data((Self.format(entry) + "\n").utf8))
    }

    /// `[moonmock] GET http://host/path → 200 (GET /users/:id)`, then headers and body lines.
    static func format(_ e: LoggedRequest) -> String {
        var line = "[moonmock] \(e.method) \(e.url)"
        if let status = e.status { line += " → \(status == 0 ? "fault" : String(status))" } else { line += " → passed through" }
        line += e.ruleID.map { " (\($0))" } ?? (e.status == nil ? "" : " (unmatched)")
        for h in e.headers { line += "\n    \(h.name): \(h.value)" }
        if !e.body.isEmpty {
            let text = String(decoding: e.body.prefix(2048), as: UTF8.self)
            line += "\n    " + text + (e.body.count > 2048 ? "… (\(e.body.count) bytes)" : "")
        }
        return line
    }
}
