import MoonmockCore

/// One HTTP/2 stream: a request as its frames arrive, then the answer as it leaves (owned by the
/// connection's event loop, like the ``Connection`` it belongs to).
final class HTTP2Stream {
    let id: Int32
    // The request.
    var method = "", path = "", scheme = "", authority = ""
    /// The regular fields as checked header lines (`name: value\r\n`; nghttp2 has refused CR,
    /// LF and NUL in values), made into ``HTTPHeaders`` without a copy per field.
    var lines: [UInt8] = []
    var sawHost = false
    var body: [UInt8] = []
    var headerBytes = 0
    /// `431` or `413`: the request broke a limit, and gets this instead of its rule's answer.
    var refusal: Int?
    /// END_STREAM has arrived (the request is whole).
    var complete = false

    // The answer.
    /// What the stream is waiting for.
    enum Phase {
        case reading
        /// Its answer is being made elsewhere (a store worker, an upstream, a waiting handler).
        case parked
        /// The answer waits for its delay.
        case delayed(MockResponse)
        /// The `timeout` fault: never answered.
        case held
        /// A body sent slice by slice, `bytesPerSecond`.
        case dribbling([UInt8], Int, Int)
        /// A streamed answer (SSE, `mock.stream`, `mock.llm`) as DATA frames from the loop's timers.
        case streaming(StreamCursor)
        /// Headers and the whole body handed to nghttp2.
        case sending
    }
    var phase = Phase.reading
    var isHead = false
    /// A streamed gRPC answer: its status envelope becomes the trailers.
    var grpc = false
    /// The request's `content-type` (noted as its fields arrive: live calls are told apart by it).
    var contentType = ""
    /// Routed on its headers (a live streaming call): its end is not routed again.
    var dispatched = false
    /// A live call's messages both ways (``EventLoop/openLiveCall(_:_:_:_:_:)``).
    var liveSession: WebSocketSession?
    /// Counted in the loop's requests in flight until it closes.
    var active = false
    /// A handler this stream waits for (cancelled if the client resets the stream).
    var waiting: WaitHandle?
    /// Body bytes nghttp2 has yet to take, from `sent` on.
    var out: [UInt8] = []
    var sent = 0
    var bodySent = 0
    /// Bytes of `out` counted in the loop's unsent output (a whole answer's body, until sent).
    var counted = 0
    /// No more body bytes will be added to `out`.
    var finished = false
    /// nghttp2 found `out` empty and waits for ``HTTP2Session/resume(_:)``.
    var deferred = false
    /// Sent after the body (gRPC's `grpc-status`).
    var trailers: [(String, String)]?
    /// The `malformed_chunk` fault: the stream is reset with this code once `out` is sent.
    var resetWhenSent: UInt32?
    /// Response HEADERS have been submitted.
    var started = false
    var isClosed = false
    /// Since when (and at how many body bytes sent) the answer has made no progress (the sweep's).
    var stalledSince: UInt64 = 0, stalledAt = 0
    var closeCode: UInt32 = 0

    init(id: Int32) { self.id = id }

    /// Notes one request field: pseudo-fields by name, the rest as header lines.
    func addField(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        if name.first == UInt8(ascii: ":") {
            let text = String(decoding: value, as: UTF8.self)
            switch name.count {
            case 5 where name[1] == UInt8(ascii: "p"): path = text
            case 7 where name[1] == UInt8(ascii: "m"): method = text
            case 7 where name[1] == UInt8(ascii: "s"): scheme = text
            case 10: authority = text
            default: break
            }
            return
        }
        if name.count == 4 && name.elementsEqual("host".utf8) { sawHost = true }
        if name.count == 12 && name.elementsEqual("content-type".utf8) { contentType = String(decoding: value, as: UTF8.self) }
        lines.append(contentsOf: name)
        lines.append(UInt8(ascii: ":"))
        lines.append(UInt8(ascii: " "))
        lines.append(contentsOf: value)
        lines.append(13)
        lines.append(10)
    }

    /// The request the engine sees: the same as over HTTP/1.1, with `Host` from `:authority`
    /// when the client sent no `host` field (RFC 9113 §8.3.1).
    func request(defaultScheme: String, defaultAuthority: String) -> MockRequest {
        let authority = self.authority.isEmpty ? defaultAuthority : self.authority
        if !sawHost {
            lines.append(contentsOf: "host: ".utf8)
            lines.append(contentsOf: authority.utf8)
            lines.append(contentsOf: [13, 10])
        }
        return MockRequest(method: method, scheme: scheme.isEmpty ? defaultScheme : scheme, authority: authority,
                           target: path.isEmpty ? "/" : path, headers: HTTPHeaders(validatedLines: lines), body: body)
    }
}
