import CNghttp2
import Dispatch
import MoonmockCore

/// One HTTP/2 connection's framing: an nghttp2 server session that the connection's event loop
/// feeds with the bytes it reads (``receive(_:)``) and drains of the bytes to write
/// (``drain(into:limit:)``); nghttp2 does no I/O of its own. Requests come out as
/// ``HTTP2Stream``s in ``ready``, answers go in through ``respond(_:status:fields:body:)``.
/// Unsafe code (nghttp2's callbacks and buffers) is confined to this file.
final class HTTP2Session {
    /// Bounds that hold against a hostile peer (see docs/http2.md).
    struct Limits {
        /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once.
        var maxConcurrentStreams: UInt32 = 100
        /// SETTINGS_MAX_HEADER_LIST_SIZE, enforced: a larger request gets `431`.
        var maxHeaderListBytes = 64 * 1024
        /// A request body past this gets `413` (the rest of it is read and dropped).
        var maxBodyBytes = 16 << 20
        /// Request body bytes the connection holds across its streams at most: past it, GOAWAY.
        var maxConnectionBodyBytes = 64 << 20
        /// Streams the client may reset before they are answered: a burst, then this many per
        /// second (CVE-2023-44487, "rapid reset"); past it, GOAWAY with ENHANCE_YOUR_CALM.
        var resetBurst: UInt64 = 500, resetsPerSecond: UInt64 = 50
        /// CONTINUATION frames after one HEADERS frame (CVE-2024-28182).
        var maxContinuations = 8
    }

    private var session: OpaquePointer?
    let limits: Limits
    /// Open streams by id.
    var streams: [Int32: HTTP2Stream] = [:]
    /// Requests that arrived whole during the last ``receive(_:)``, in order.
    var ready: [HTTP2Stream] = []
    /// Live calls in progress (``EventLoop/openLiveCall(_:_:_:_:_:)``), fed after each read.
    var live: [Int32: HTTP2Stream] = [:]
    /// Requests whose headers arrived during the last ``receive(_:)`` with more to come (a body).
    var opened: [HTTP2Stream] = []
    /// Streams that closed (answered, or reset by the client) since the loop last looked.
    var closed: [HTTP2Stream] = []
    /// Request body bytes held by open streams.
    var bodyBytes = 0
    /// Counted answer bytes sent (or dropped with their stream) since the loop last took them
    /// off its unsent-output count.
    var released = 0
    /// Why the session refused the peer (a GOAWAY says so), if it did.
    var failure: String?
    /// nghttp2 gave up on the session (a fatal error): nothing more is read or written through
    /// it, and ``finalGoAway`` is the connection's last frame.
    private(set) var dead = false
    private(set) var finalGoAway: [UInt8] = []
    /// The HTTP/2 error code for a peer this side gave up on (ENHANCE_YOUR_CALM for floods).
    private var failureCode: UInt32 = 1
    /// RST_STREAM frames the client may still send: a bucket of ``Limits/resetBurst`` refilled
    /// at ``Limits/resetsPerSecond`` (checked before nghttp2's own, larger one).
    private var resetTokens: Double
    private var resetsCountedAt = DispatchTime.now().uptimeNanoseconds

    /// A server session that has sent its SETTINGS. `upgrade`: the `HTTP2-Settings` payload of an
    /// `Upgrade: h2c` request, which becomes stream 1 (half-closed: its answer is still to come).
    init?(limits: Limits, upgrade: (settings: [UInt8], head: Bool)? = nil) {
        self.limits = limits
        self.resetTokens = Double(limits.resetBurst)
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0 else { return nil }
        defer { nghttp2_option_del(option) }
        // nghttp2's own bounds, looser than this session's (which answer first, with ENHANCE_YOUR_CALM).
        nghttp2_option_set_stream_reset_rate_limit(option, limits.resetBurst * 2, limits.resetsPerSecond * 2)
        nghttp2_option_set_max_continuations(option, limits.maxContinuations)
        nghttp2_option_set_max_settings(option, 32)
        nghttp2_option_set_max_outbound_ack(option, 1000)
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&session, Self.callbacks, user, option) == 0 else { return nil }
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limits.maxConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(limits.maxHeaderListBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        if let upgrade {
            let stream = HTTP2Stream(id: 1)
            streams[1] = stream
            let rc = upgrade.settings.withUnsafeBufferPointer {
                nghttp2_session_upgrade2(session, $0.baseAddress, $0.count, upgrade.head ? 1 : 0, nil)
            }
            guard rc == 0 else { return nil }
            // (A server's upgrade ignores the user data it is given: set after.)
            nghttp2_session_set_stream_user_data(session, 1, Unmanaged.passUnretained(stream).toOpaque())
        }
        guard nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0 else { return nil }
        // The connection's window as large as a stream's: uploads are not held to 64 KB per round trip.
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 1 << 20)
    }

    deinit { nghttp2_session_del(session) }

    /// Feeds bytes read from the client. `false`: the peer broke the protocol or a limit, and a
    /// GOAWAY is queued; the connection closes once it is written.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count > 0, !dead else { return !dead }
        let rc = nghttp2_session_mem_recv(session, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        if rc < 0 {
            if failure == nil { failure = String(cString: nghttp2_strerror(Int32(rc))) }
            if rc == Int(NGHTTP2_ERR_FLOODED.rawValue) || rc == Int(NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue) { failureCode = 11 }
            if rc == Int(NGHTTP2_ERR_FLOW_CONTROL.rawValue) { failureCode = 3 }
            giveUp()
            return false
        }
        return failure == nil
    }

    /// A fatal error: nghttp2 cannot go on, so the GOAWAY is written here (RFC 9113 §6.8).
    private func giveUp() {
        dead = true
        let last = UInt32(bitPattern: max(0, nghttp2_session_get_last_proc_stream_id(session)))
        let reason = Array((failure ?? "").utf8.prefix(200))
        let length = 8 + reason.count
        var frame: [UInt8] = [UInt8(length >> 16), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), 7, 0, 0, 0, 0, 0]
        for value in [last, failureCode] { frame += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }
        finalGoAway = frame + reason
    }

    /// One more RST_STREAM from the client: `false` once it has sent too many too fast.
    private func takeResetToken() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        resetTokens = min(Double(limits.resetBurst), resetTokens + Double(now &- resetsCountedAt) / 1e9 * Double(limits.resetsPerSecond))
        resetsCountedAt = now
        resetTokens -= 1
        return resetTokens >= 0
    }

    /// Appends frames to write to `out` until nghttp2 has none or `out` holds `limit` bytes.
    func drain(into out: inout [UInt8], limit: Int) {
        if dead {
            out += finalGoAway
            finalGoAway = []
            return
        }
        while out.count < limit {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            if n <= 0 { if n < 0, failure == nil { failure = String(cString: nghttp2_strerror(Int32(n))) }; return }
            out.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        }
    }

    /// Neither side has anything more to say: the connection may close.
    var isFinished: Bool { dead ? finalGoAway.isEmpty : nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 }

    /// Whether nghttp2 has frames to write.
    var wantsWrite: Bool { dead ? !finalGoAway.isEmpty : nghttp2_session_want_write(session) != 0 }

    /// Sends the answer's head; `body`: whether DATA follows (from ``HTTP2Stream/out``, until
    /// ``HTTP2Stream/finished``), else the HEADERS frame ends the stream.
    func respond(_ stream: HTTP2Stream, status: Int, fields: [(String, String)], body: Bool) {
        stream.started = true
        if dead { return }
        var provider = nghttp2_data_provider()
        provider.read_callback = Self.readBody
        Self.withFields(status: status, fields) { nva in
            if body {
                _ = nghttp2_submit_response(session, stream.id, nva.baseAddress, nva.count, &provider)
            } else {
                _ = nghttp2_submit_response(session, stream.id, nva.baseAddress, nva.count, nil)
            }
        }
    }

    /// More of a stream's body (or its end) is in ``HTTP2Stream/out``: nghttp2 takes it on.
    func resume(_ stream: HTTP2Stream) {
        if stream.deferred && !dead {
            stream.deferred = false
            nghttp2_session_resume_data(session, stream.id)
        }
    }

    /// Ends a stream with RST_STREAM (`code`: an HTTP/2 error code, RFC 9113 §7).
    func reset(_ stream: HTTP2Stream, code: UInt32) {
        if dead { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, code)
    }

    /// GOAWAY: no new streams. `graceful`: streams already begun are answered; otherwise the
    /// session ends at once with `code`.
    func goAway(code: UInt32, graceful: Bool, _ message: String = "") {
        if dead { return }
        if graceful {
            let last = nghttp2_session_get_last_proc_stream_id(session)
            Array(message.utf8).withUnsafeBufferPointer {
                _ = nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, code, $0.baseAddress, $0.count)
            }
        } else {
            if failure == nil { failure = message }
            nghttp2_session_terminate_session(session, code)
        }
    }

    /// The frames' header fields as nghttp2 takes them: `:status` first, names in lower case.
    private static func withFields(status: Int, _ fields: [(String, String)], _ body: (UnsafeBufferPointer<nghttp2_nv>) -> Void) {
        var bytes: [UInt8] = []
        var spans: [(Int, Int, Int, Int)] = []
        bytes.reserveCapacity(256)
        spans.reserveCapacity(fields.count + 1)
        // Names in lower case (RFC 9113 §8.2.1); CR, LF and NUL left out of values (§8.2.1 too).
        func add(_ name: String, _ value: String) {
            let n = bytes.count
            var name = name, value = value
            name.withUTF8 { for b in $0 { bytes.append(b >= 65 && b <= 90 ? b + 32 : b) } }
            let v = bytes.count
            value.withUTF8 { for b in $0 where b != 13 && b != 10 && b != 0 { bytes.append(b) } }
            spans.append((n, v - n, v, bytes.count - v))
        }
        if status > 0 { add(":status", String(status)) }
        for (name, value) in fields { add(name, value) }
        bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress ?? UnsafeMutablePointer<UInt8>.allocate(capacity: 0)
            let nva = spans.map { nghttp2_nv(name: base + $0.0, value: base + $0.2, namelen: $0.1, valuelen: $0.3,
                                             flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)) }
            nva.withUnsafeBufferPointer(body)
        }
    }

    /// Submits a stream's trailers (called from the body callback once its last byte is out).
    private func submitTrailers(_ stream: HTTP2Stream, _ trailers: [(String, String)]) {
        Self.withFields(status: 0, trailers) { nva in _ = nghttp2_submit_trailer(session, stream.id, nva.baseAddress, nva.count) }
    }

    /// The stream nghttp2 keeps `id`'s user data for (set when its headers began).
    private static func stream(_ session: OpaquePointer?, _ id: Int32) -> HTTP2Stream? {
        guard let pointer = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        return Unmanaged<HTTP2Stream>.fromOpaque(pointer).takeUnretainedValue()
    }

    private static func me(_ user: UnsafeMutableRawPointer?) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(user!).takeUnretainedValue()
    }

    // MARK: nghttp2's callbacks

    private static let temporalFailure = Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    private static let callbackFailure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)

    /// One set of callbacks for every session (nghttp2 copies it into each).
    nonisolated(unsafe) private static let callbacks: OpaquePointer = {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { session, frame, user in
            guard let frame, mm_h2_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue),
                  mm_h2_headers_category(frame) == Int32(NGHTTP2_HCAT_REQUEST.rawValue) else { return 0 }
            let me = HTTP2Session.me(user)
            let id = mm_h2_frame_stream(frame)
            let stream = HTTP2Stream(id: id)
            me.streams[id] = stream
            // Found again by the frame callbacks without a lookup (the dictionary keeps it alive).
            nghttp2_session_set_stream_user_data(session, id, Unmanaged.passUnretained(stream).toOpaque())
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { session, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value else { return 0 }
            let me = HTTP2Session.me(user)
            guard let stream = HTTP2Session.stream(session, mm_h2_frame_stream(frame)) else { return 0 }
            if mm_h2_headers_category(frame) != Int32(NGHTTP2_HCAT_REQUEST.rawValue) {
                // Request trailers (gRPC clients send none; others are kept as headers).
                stream.addField(UnsafeBufferPointer(start: name, count: nameLength), UnsafeBufferPointer(start: value, count: valueLength))
                return 0
            }
            stream.headerBytes += nameLength + valueLength + 32
            if stream.headerBytes > me.limits.maxHeaderListBytes {
                stream.refusal = 431
                return 0
            }
            stream.addField(UnsafeBufferPointer(start: name, count: nameLength), UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { session, _, id, data, length, user in
            let me = HTTP2Session.me(user)
            guard let stream = HTTP2Session.stream(session, id), let data else { return 0 }
            if stream.refusal != nil { return 0 }
            if stream.body.count + length > me.limits.maxBodyBytes {
                stream.refusal = 413
                me.bodyBytes -= stream.body.count
                stream.body = []
                return 0
            }
            me.bodyBytes += length
            if me.bodyBytes > me.limits.maxConnectionBodyBytes {
                me.failure = "the client's request bodies passed \(me.limits.maxConnectionBodyBytes) bytes on one connection"
                return HTTP2Session.callbackFailure
            }
            stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { session, frame, user in
            guard let frame else { return 0 }
            let type = mm_h2_frame_type(frame)
            if type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                let me = HTTP2Session.me(user)
                if !me.takeResetToken() {
                    me.failure = "too many streams reset too fast (rapid reset)"
                    me.failureCode = 11
                    return HTTP2Session.callbackFailure
                }
                return 0
            }
            let me = HTTP2Session.me(user)
            if type == UInt8(NGHTTP2_HEADERS.rawValue), mm_h2_frame_flags(frame) & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) == 0,
               mm_h2_headers_category(frame) == Int32(NGHTTP2_HCAT_REQUEST.rawValue), let stream = HTTP2Session.stream(session, mm_h2_frame_stream(frame)) {
                me.opened.append(stream)
                return 0
            }
            guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue),
                  mm_h2_frame_flags(frame) & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 else { return 0 }
            if let stream = HTTP2Session.stream(session, mm_h2_frame_stream(frame)), !stream.complete {
                stream.complete = true
                me.ready.append(stream)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, code, user in
            let me = HTTP2Session.me(user)
            guard let stream = me.streams.removeValue(forKey: id) else { return 0 }
            me.bodyBytes -= stream.body.count
            me.released += stream.counted
            stream.counted = 0
            stream.closeCode = code
            stream.isClosed = true
            me.closed.append(stream)
            return 0
        }
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks) { _, _, code, user in
            let me = HTTP2Session.me(user)
            if me.failure == nil, code == Int32(NGHTTP2_ERR_FLOW_CONTROL.rawValue) { me.failure = "flow-control window exceeded" }
            return 0
        }
        return callbacks!
    }()

    /// nghttp2 asks for the next DATA frame's bytes of a stream's answer.
    private static let readBody: nghttp2_data_source_read_callback = { session, id, buffer, length, flags, _, user in
        let me = HTTP2Session.me(user)
        guard let stream = HTTP2Session.stream(session, id), let buffer, let flags else { return Int(temporalFailure) }
        let n = min(length, stream.out.count - stream.sent)
        if n > 0 {
            stream.out.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + stream.sent, count: n) }
            stream.sent += n
            stream.bodySent += n
            let counted = min(n, stream.counted)
            stream.counted -= counted
            me.released += counted
        }
        if stream.sent == stream.out.count {
            stream.out.removeAll(keepingCapacity: stream.out.capacity <= 16 * 1024)
            stream.sent = 0
            if stream.finished {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
                if let trailers = stream.trailers {
                    flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                    me.submitTrailers(stream, trailers)
                } else if let code = stream.resetWhenSent {
                    flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                    me.reset(stream, code: code)
                }
            } else if n == 0 {
                stream.deferred = true
                return Int(NGHTTP2_ERR_DEFERRED.rawValue)
            }
        }
        return n
    }
}
