import CCurl
import Foundation
import MoonmockCore

/// Outbound requests (`mock.fetch`, webhooks, `mock.proxy` with a transform) on libcurl's multi
/// interface: every transfer of the process on one thread that waits in `curl_multi_poll` — no
/// thread per call, and one connection cache, so a handler's second call to an upstream reuses
/// the connection its first one opened, whichever event loop ran it. Completions run on that
/// thread and should hand their work on (the server's loops take it through their command
/// queues).
///
/// ```swift
/// let cancel = CurlOutbound.shared.send(OutboundRequest(url: "http://127.0.0.1:9000/")) { result in print(result) }
/// ```
public final class CurlOutbound: OutboundClient, @unchecked Sendable {
    // @unchecked: `multi` and `active` are used only by the transfer thread; the rest under `state`.
    public static let shared = CurlOutbound()

    private struct Submission: @unchecked Sendable {   // the transfer pointer: only the transfer thread touches it after submission
        let serial: UInt64
        let transfer: UnsafeMutablePointer<mm_transfer>
        let completion: @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void
    }
    private struct State: Sendable {
        var added: [Submission] = []
        var cancelled: [UInt64] = []
        var serial: UInt64 = 0
        var started = false
    }
    private let state = Locked(State())
    private let multi: UnsafeMutableRawPointer
    /// Transfers on the multi handle, by serial (the transfer thread's own).
    private var active: [UInt64: Submission] = [:]
    private var serials: [UnsafeMutablePointer<mm_transfer>: UInt64] = [:]

    public init() {
        Self.globalInit
        multi = mm_multi_new()
    }

    private static let globalInit: Void = { mm_upstream_global_init() }()

    public func send(_ request: OutboundRequest,
                     completion: @escaping @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void) -> @Sendable () -> Void {
        var lines = request.headers.fields.map { "\($0.name): \($0.value)" }
        // Fields curl would add that the handler did not ask for.
        if request.headers["accept"] == nil { lines.append("Accept:") }
        if request.headers["content-type"] == nil && !request.body.isEmpty { lines.append("Content-Type:") }
        let made = withCStringArray(lines) { pointers in
            request.body.withUnsafeBufferPointer { body in
                mm_transfer_new(request.method, request.url, pointers, lines.count, body.baseAddress, body.count,
                                request.timeoutMilliseconds, request.insecure ? 1 : 0, request.caFile ?? Self.environmentCA)
            }
        }
        guard let transfer = made else {
            completion(.failure(OutboundFailure("libcurl could not start a transfer")))
            return {}
        }
        let (serial, start) = state.withLock { s -> (UInt64, Bool) in
            s.serial += 1
            s.added.append(Submission(serial: s.serial, transfer: transfer, completion: completion))
            defer { s.started = true }
            return (s.serial, !s.started)
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "moonmock.outbound"
            thread.start()
        }
        mm_multi_wakeup(multi)
        return { [self] in
            state.withLock { $0.cancelled.append(serial) }
            mm_multi_wakeup(multi)
        }
    }

    /// `SSL_CERT_FILE` when set (as OpenSSL's tools read it): where a test's local CA is trusted.
    private static let environmentCA: String? = ProcessInfo.processInfo.environment["SSL_CERT_FILE"]

    private func run() {
        while true {
            let (added, cancelled) = state.withLock { s -> ([Submission], [UInt64]) in
                defer { s.added = []; s.cancelled = [] }
                return (s.added, s.cancelled)
            }
            for submission in added {
                active[submission.serial] = submission
                serials[submission.transfer] = submission.serial
                _ = mm_multi_add(multi, submission.transfer)
            }
            for serial in cancelled {
                // Cancelled: the connection closes (the upstream sees the client go); no completion.
                guard let submission = active.removeValue(forKey: serial) else { continue }
                serials[submission.transfer] = nil
                _ = mm_multi_remove(multi, submission.transfer)
                mm_transfer_free(submission.transfer)
            }
            _ = mm_multi_run(multi, active.isEmpty ? 1000 : 100)
            var code: Int32 = 0
            while let done = mm_multi_done(multi, &code) {
                guard let serial = serials.removeValue(forKey: done), let submission = active.removeValue(forKey: serial) else { continue }
                _ = mm_multi_remove(multi, done)
                mm_transfer_collect(done, code)
                let result = Self.result(done.pointee.result)
                mm_transfer_free(done)
                submission.completion(result)
            }
        }
    }

    private static func result(_ r: mm_upstream_result) -> Result<OutboundResponse, OutboundFailure> {
        guard r.code == 0, r.status >= 100 else {
            let reason = withUnsafeBytes(of: r.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return .failure(OutboundFailure(reason.isEmpty ? "no answer" : reason))
        }
        var response = OutboundResponse(status: Int(r.status))
        let head = r.head.data.map { String(decoding: UnsafeBufferPointer(start: $0, count: r.head.len), as: UTF8.self) } ?? ""
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            response.headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if let data = r.body.data { response.body = Array(UnsafeBufferPointer(start: data, count: r.body.len)) }
        return .success(response)
    }
}

/// `body` with the strings as a C array of C strings.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer<CChar>($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
