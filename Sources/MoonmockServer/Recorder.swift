import Foundation
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
        public var keepHost = false

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
        // The upstream is asked for its bodies as they are (no content coding to undo).
        let target = ProxyTarget(base: settings.upstream, headers: [("Accept-Encoding", "")])
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

    /// Where `request` goes while recording (the admin API excepted); `nil` when no recording runs.
    func target(for request: MockRequest) -> ProxyTarget? {
        guard running.load(ordering: .relaxed) else { return nil }
        return session.withLock { $0?.target }
    }

    /// Keeps `request` and the upstream's answer when `target` is the recording's and the path is wanted.
    func record(_ request: MockRequest, _ response: MockResponse, via target: ProxyTarget) {
        session.withLock { s in
            guard let current = s, current.target === target, response.fault == nil else { return }
            if !current.settings.only.isEmpty && !current.settings.only.contains(where: { $0.match(request) != nil }) { return }
            // An upstream that could not be reached is no answer to mock.
            if response.headers["x-moonmock-proxy-error"] != nil { return }
            s?.exchanges.append(RecordedExchange(request: request, status: response.status, headers: response.headers,
                                                 body: response.body, recordedAt: Date()))
        }
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
