import Foundation
import MoonmockCodings
import MoonmockCore
import MoonmockImport

/// Recording a real API (`moonmock record`, `POST /__moonmock/recordings/start`): while a
/// recording runs, every request but the admin API's goes to the upstream, and each request
/// with the answer it got is kept; a snapshot hands them to ``ScriptWriter``.
///
/// ```swift
/// server.recorder.start(Recorder.Settings(upstream: "https://api.example.com"))
/// // … requests …
/// let output = server.recorder.snapshot()   // mocks.lua and fixtures
/// ```
public final class Recorder: Sendable {
    public struct Settings: Sendable {
        public var upstream: String
        /// Where snapshots are written (`DIR/mocks.lua`, `DIR/fixtures/`); `nil`: only returned.
        public var out: String?
        /// Only requests whose path one of these patterns matches are recorded (all go upstream).
        public var only: [RoutePattern] = []
        public var redactHeaders: Set<String> = []
        public var redactJSONKeys: Set<String> = []
        /// Pin the written rules to the upstream's scheme, host and path prefix.
        public var keepHost = false
        /// Cookies whose values are written as `REDACTED` (session-like ones always are).
        public var redactCookies: Set<String> = []
        /// Write every cookie's value as it came (`--keep-cookies`).
        public var keepCookies = false
        /// Told a line for each request forwarded (`record --log`).
        public var log: (@Sendable (String) -> Void)?

        public init(upstream: String, out: String? = nil) {
            self.upstream = upstream
            self.out = out
        }
    }

    private struct Session {
        let settings: Settings
        let target: ProxyTarget
        let started: Date
        var exchanges: [RecordedExchange] = []
    }

    private let session = Locked<Session?>(nil)
    /// Read on every request: one relaxed load while no recording runs.
    private let running = AtomicBool(false)

    public init() {}

    public var isRecording: Bool { running.load(ordering: .relaxed) }

    /// Starts recording to `settings.upstream` (ending a recording that runs, its exchanges dropped).
    public func start(_ settings: Settings) {
        // The upstream is asked for its bodies without a content coding (what still comes
        // encoded, a pre-compressed asset, is decoded before it is kept).
        let target = ProxyTarget(base: settings.upstream, headers: [("Accept-Encoding", "identity")])
        session.withLock { $0 = Session(settings: settings, target: target, started: Date()) }
        running.store(true, ordering: .relaxed)
    }

    /// Ends the recording; its last snapshot (`nil` when none ran).
    @discardableResult
    public func stop() -> ScriptWriter.Output? {
        let output = snapshot()
        session.withLock { $0 = nil }
        running.store(false, ordering: .relaxed)
        return output
    }

    /// Where `request` goes while recording (the admin API excepted); `nil` when no recording
    /// runs. The upstream is told where the client came from (`X-Forwarded-Host`, `-Proto`,
    /// `Forwarded`), so that the URLs it builds can point back at the recorder.
    func target(for request: MockRequest) -> ProxyTarget? {
        guard running.load(ordering: .relaxed), let base = session.withLock({ $0?.target }) else { return nil }
        let host = request.headers["host"] ?? request.origin.components(separatedBy: "://").last ?? ""
        let forwarded = "host=\"\(host)\";proto=\(request.scheme)"
        return ProxyTarget(base: base.base, headers: base.headers + [("X-Forwarded-Host", host), ("X-Forwarded-Proto", request.scheme),
                                                                      ("Forwarded", forwarded)],
                           timeoutMilliseconds: base.timeoutMilliseconds, insecure: base.insecure, journalID: base.journalID)
    }

    /// The upstream's answer as the client gets it, absolute URLs to the upstream pointing at
    /// the recorder instead; kept, decoded, when `target` is the recording's and the path is wanted.
    func record(_ request: MockRequest, _ response: MockResponse, via target: ProxyTarget) -> MockResponse {
        guard let current = session.withLock({ $0 }), current.target.base == target.base else { return response }
        var live = response
        live.headers = Self.pointingHere(response.headers, upstream: current.target.base, origin: request.origin)
        current.settings.log?("\(request.method) \(request.path)\(request.rawQuery.map { "?" + $0 } ?? "") → "
                              + (response.fault == nil ? "\(response.status) (\(response.body.count) bytes)" : "no answer"))
        guard response.fault == nil, response.headers["x-moonmock-proxy-error"] == nil else { return live }   // no answer to mock
        if !current.settings.only.isEmpty && !current.settings.only.contains(where: { $0.match(request) != nil }) { return live }
        var kept = live
        let codings = kept.headers.values("content-encoding")
        if !codings.isEmpty, let decoded = try? ContentDecoding.decode(kept.body, contentEncodings: codings) {
            kept.body = decoded
            kept.headers["Content-Encoding"] = nil
            kept.headers["Content-Length"] = nil
        }
        session.withLock { s in
            guard s?.target.base == target.base else { return }
            s?.exchanges.append(RecordedExchange(request: request, status: kept.status, headers: kept.headers, body: kept.body, recordedAt: Date()))
        }
        return live
    }

    /// `headers` with the upstream's absolute URLs in `Location`, `Content-Location`, `Link` and
    /// `Refresh` on `origin` (the recorder as the client addressed it), and a cookie `Domain`
    /// naming the upstream's host dropped, so that the browser keeps talking to the recorder.
    static func pointingHere(_ headers: HTTPHeaders, upstream: String, origin: String) -> HTTPHeaders {
        let upstreamHost = URLComponents(string: upstream)?.host?.lowercased() ?? ""
        var out = HTTPHeaders()
        for field in headers {
            let name = field.name.lowercased()
            var value = field.value
            if URLRewriting.headers.contains(name) {
                value = URLRewriting.replacing(upstream, with: origin, in: value)
            } else if name == "set-cookie", !upstreamHost.isEmpty {
                value = value.split(separator: ";", omittingEmptySubsequences: false).filter { part in
                    let attribute = part.trimmingCharacters(in: .whitespaces).lowercased()
                    guard attribute.hasPrefix("domain=") else { return true }
                    let domain = attribute.dropFirst(7).trimmingCharacters(in: CharacterSet(charactersIn: ". "))
                    return domain != upstreamHost
                }.joined(separator: ";")
            }
            out.add(field.name, value)
        }
        return out
    }

    /// The script for what was recorded so far (``ScriptWriter/Output/save(in:)`` writes it).
    public func snapshot() -> ScriptWriter.Output? {
        guard let current = session.withLock({ $0 }) else { return nil }
        var options = ScriptWriter.Options(title: "Recorded from \(current.settings.upstream) by `moonmock record`, "
                                           + "\(current.exchanges.count) request\(current.exchanges.count == 1 ? "" : "s") since "
                                           + ScriptWriter.stamp(current.started) + ".")
        options.redactHeaders = current.settings.redactHeaders
        options.redactJSONKeys = current.settings.redactJSONKeys
        options.keepHost = current.settings.keepHost
        options.pinnedBase = current.settings.upstream
        options.redactCookies = current.settings.redactCookies
        options.keepCookies = current.settings.keepCookies
        return ScriptWriter(options: options).write(current.exchanges)
    }

    /// Where the running recording writes its snapshots (`nil`: none runs, or it only returns them).
    public var out: String? { session.withLock { $0?.settings.out } }

    /// What a recording is doing, for `GET /__moonmock/recordings`.
    var status: JSONValue {
        guard let current = session.withLock({ $0 }) else { return .object(["recording": .bool(false)]) }
        return .object(["recording": .bool(true), "upstream": .string(current.settings.upstream),
                        "requests": .integer(Int64(current.exchanges.count)),
                        "out": current.settings.out.map(JSONValue.string) ?? .null])
    }
}
