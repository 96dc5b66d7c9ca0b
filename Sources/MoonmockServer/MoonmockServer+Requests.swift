import CMicroHTTPD
import Foundation
import MoonmockCore

/// One request's state across libmicrohttpd's calls to the access handler. Created by the URI
/// logger (which sees the raw URI, query included), released when the request completes.
/// A connection is served by one thread at a time; timers only resume it.
final class ServerRequest: @unchecked Sendable {
    let rawURI: String
    var started = false
    var body: [UInt8] = []
    var tooLarge = false
    /// A response waiting for its delay to pass.
    var pending: MockResponse?
    /// Set when the server stops while this request is held by the `timeout` fault.
    var closeOnResume = false
    var request: MockRequest?
    let receivedAt = DispatchTime.now().uptimeNanoseconds

    init(rawURI: String) { self.rawURI = rawURI }
}

// MARK: libmicrohttpd callbacks (C function pointers; kept out of main.swift on purpose)

/// Creates the per-request state from the raw URI, before headers are parsed.
func serverURILogger(_ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?) -> UnsafeMutableRawPointer? {
    guard let cls else { return nil }
    // The server outlives its daemons: borrowed, not retained (its reference count is shared by
    // every worker thread, so each retain would move a cache line between cores).
    Unmanaged<MoonmockServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.requestStarted() }
    let request = ServerRequest(rawURI: uri.map { String(cString: $0) } ?? "/")
    return Unmanaged.passRetained(request).toOpaque()
}

/// Releases the per-request state.
func serverRequestCompleted(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                            _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode) {
    guard let cls, let context, let raw = context.pointee else { return }
    Unmanaged<ServerRequest>.fromOpaque(raw).release()
    context.pointee = nil
    Unmanaged<MoonmockServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.requestFinished() }
}

/// The access handler: called once with the headers, once per body chunk, and once more when the
/// body is complete (and again after every resume).
func serverAccessHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                         _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                         _ uploadSize: UnsafeMutablePointer<Int>?,
                         _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let context, let raw = context.pointee else { return MHD_Result.NO }
    let method = method.map { String(cString: $0) } ?? "GET"
    return Unmanaged<MoonmockServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { server in
        Unmanaged<ServerRequest>.fromOpaque(raw)._withUnsafeGuaranteedRef { request in
            server.access(connection, request, method, uploadData, uploadSize)
        }
    }
}

extension MoonmockServer {
    func access(_ connection: OpaquePointer, _ r: ServerRequest, _ method: String,
                _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>?) -> MHD_Result {
        if !r.started {
            r.started = true
            // The one early answer: a declared body that is too large.
            if let length = header(connection, "Content-Length").flatMap(Int.init) {
                if length > configuration.maxBodyBytes {
                    r.tooLarge = true
                    return queue(connection, tooLarge())
                }
                // One allocation for a typical body; a large declared length is not trusted up front.
                r.body.reserveCapacity(min(length, 64 * 1024))
            }
            return MHD_Result.YES
        }
        if let uploadSize, uploadSize.pointee > 0 {
            if !r.tooLarge, let uploadData {
                if r.body.count + uploadSize.pointee > configuration.maxBodyBytes {
                    r.tooLarge = true
                    r.body = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        r.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
        if r.closeOnResume { return MHD_Result.NO }
        if let pending = r.pending {
            r.pending = nil
            return deliver(connection, r, pending)
        }
        if r.tooLarge { return queue(connection, tooLarge()) }

        let request = makeRequest(connection, r, method)
        r.request = request
        return answer(request) { response, delay in
            if delay > 0 {
                r.pending = response
                suspend(connection, for: delay)
                return MHD_Result.YES
            }
            return deliver(connection, r, response)
        }
    }

    /// What the server answers, whichever HTTP layer carries the request: the admin API under
    /// `/__moonmock/`, else the engine; with the request's log line. `act` gets the response and
    /// its delay in milliseconds where the engine left them: returned instead, the response would
    /// be copied out of the exchange (its body and header list retained, then released with it).
    func answer<R>(_ request: MockRequest, _ act: (MockResponse, Double) -> R) -> R {
        if AdminAPI.owns(request.path) {
            let response = admin.handle(request, server: self)
            log(request, status: response.status, rule: "admin", delay: 0)
            return act(response, 0)
        }
        let exchange = engine.handle(request)
        log(exchange.request, status: exchange.response.fault == nil ? exchange.response.status : 0,
            rule: exchange.ruleID, delay: exchange.delayMilliseconds)
        return act(exchange.response, exchange.delayMilliseconds)
    }

    /// The request as the engine sees it: scheme from the transport, host from `Host`.
    private func makeRequest(_ connection: OpaquePointer, _ r: ServerRequest, _ method: String) -> MockRequest {
        var headers = HTTPHeaders()
        // Counted first (no iterator), so the fields are stored with one allocation.
        headers.reserveCapacity(Int(MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &headers) { h in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectHeader, UnsafeMutableRawPointer(h))
        }
        let scheme = configuration.tlsCertificatePEM == nil ? "http" : "https"
        let authority = headers["host"] ?? "\(configuration.host):\(port)"
        return MockRequest(method: method, scheme: scheme, authority: authority, target: r.rawURI, headers: headers, body: r.body)
    }

    func header(_ connection: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, name).map { String(cString: $0) }
    }

    /// Parks the connection for `milliseconds` without holding a thread.
    func suspend(_ connection: OpaquePointer, for milliseconds: Double) {
        MHD_suspend_connection(connection)
        let c = UncheckedConnection(connection)
        DispatchQueue.global().asyncAfter(deadline: .now() + milliseconds / 1000) { MHD_resume_connection(c.pointer) }
    }

    /// Queues a buffered response; `MHD_Result.NO` on failure.
    func queue(_ connection: OpaquePointer, _ response: MockResponse) -> MHD_Result {
        let mhd: OpaquePointer? = response.body.withUnsafeBytes { buf in
            MHD_create_response_from_buffer(buf.count, UnsafeMutableRawPointer(mutating: buf.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        guard let mhd else { return MHD_Result.NO }
        defer { MHD_destroy_response(mhd) }
        addHeaders(mhd, response.headers)
        return MHD_queue_response(connection, UInt32(response.status), mhd)
    }

    /// The response's fields on a libmicrohttpd response, and a `Date` from the engine's clock
    /// unless the rule set one (the daemon adds none of its own: a pinned clock pins `Date` over
    /// HTTPS too).
    func addHeaders(_ mhd: OpaquePointer, _ headers: HTTPHeaders) {
        var dated = false
        for field in headers where !field.name.equalsIgnoringASCIICase("content-length")
            && !field.name.equalsIgnoringASCIICase("transfer-encoding") {
            if field.name.equalsIgnoringASCIICase("date") { dated = true }
            // Explicit withCString: short strings go through the stack, not a heap copy.
            field.name.withCString { name in
                field.value.withCString { value in _ = MHD_add_response_header(mhd, name, value) }
            }
        }
        if !dated {
            let now = Int(engine.environment.now().rounded(.down))
            _ = MHD_add_response_header(mhd, "Date", HTTPDateFormat.imfFixdate(now))
        }
    }

    func tooLarge() -> MockResponse {
        .json(.object(["error": .string("request body larger than \(configuration.maxBodyBytes) bytes")]), status: 413)
    }

    // MARK: logging

    func log(_ request: MockRequest, status: Int, rule: String?, delay: Double) {
        guard configuration.log != .none else { return }
        var line = "\(request.method) \(request.path)\(request.rawQuery.map { "?" + $0 } ?? "") → \(status == 0 ? "fault" : String(status))"
        line += rule.map { "  (\($0))" } ?? "  (unmatched)"
        if delay > 0 { line += "  +\(Int(delay)) ms" }
        if configuration.log == .verbose {
            for h in request.headers { line += "\n    \(h.name): \(h.value)" }
            if !request.body.isEmpty { line += "\n    " + String(decoding: request.body.prefix(1024), as: UTF8.self) }
        }
        if let sink = configuration.logSink { sink(line) } else { print(line) }
    }
}

/// Appends one header to the `HTTPHeaders` that `cls` points to (`MHD_get_connection_values`).
private func collectHeader(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
                           _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    cls.assumingMemoryBound(to: HTTPHeaders.self).pointee.add(String(cString: key), value.map { String(cString: $0) } ?? "")
    return MHD_Result.YES
}

/// Lets a timer carry a connection (or daemon) pointer; libmicrohttpd allows resuming a
/// connection, and asking a daemon for its counts, from any thread.
struct UncheckedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
