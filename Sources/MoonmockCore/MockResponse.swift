import Foundation

/// What a rule answers: a status, headers and body, plus how the transport delivers it
/// (a delay, or a fault instead of a response).
///
/// ```swift
/// let r = MockResponse.json(.object(["ok": .bool(true)]), status: 201)
/// ```
public struct MockResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// How long the transport waits before answering.
    public var delay: DelaySpec?
    /// A transport-level failure delivered instead of (or while sending) the response.
    public var fault: Fault?

    /// `mock.proxy`: the door forwards the request there and answers with the upstream's
    /// response (status, headers and body here are unused). Kept in ``fault`` as
    /// ``Fault/forward(_:)``: a field of its own would be one more reference to retain and
    /// release with every copy of every response (+5% instructions per request).
    /// The stream this answer sends, if it is one (kept in ``fault``, as ``proxy`` is).
    public var stream: StreamPlan? {
        if case .stream(let plan)? = fault { return plan }
        return nil
    }

    public var proxy: ProxyTarget? {
        get {
            if case .forward(let target)? = fault { return target }
            return nil
        }
        set {
            if let newValue {
                fault = .forward(newValue)
            } else if case .forward? = fault {
                fault = nil
            }
        }
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                delay: DelaySpec? = nil, fault: Fault? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.fault = fault
    }

    /// A JSON response (`application/json`).
    public static func json(_ value: JSONValue, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: .json, body: value.encoded())
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// A response that is only a fault.
    public static func fault(_ fault: Fault) -> MockResponse { MockResponse(status: 0, fault: fault) }

    /// The standard reason phrase for the status (`"Not Found"`), or `""`.
    public var reasonPhrase: String { HTTPStatus.reason(status) }
}

/// A transport-level failure (DESIGN §2.2). Each transport maps it to what its clients can see.
public enum Fault: Sendable, Equatable, CustomStringConvertible {
    /// The connection is reset (TCP RST); in-process `URLError.networkConnectionLost`.
    case connectionReset
    /// The connection closes without a byte; in-process `URLError.badServerResponse`.
    case emptyResponse
    /// A chunked body with an invalid chunk; in-process `URLError.badServerResponse`.
    case malformedChunk
    /// The connection is held and never answered; in-process `URLError.timedOut`.
    case timeout
    /// The body is sent at `bytesPerSecond`.
    case dribble(bytesPerSecond: Int)
    /// A specific error for in-process clients (a Swift stub's `failure(_:)`). Over the wire,
    /// where an error object cannot travel, the server resets the connection.
    case error(TransportFailure)
    /// Not a failure: the request is forwarded and the upstream's answer delivered
    /// (`mock.proxy`, see ``MockResponse/proxy``).
    case forward(ProxyTarget)
    /// Not a failure: the body is sent in pieces over time (`mock.sse`, `mock.stream`,
    /// `mock.llm`, see ``StreamPlan``); ``MockResponse/body`` is unused.
    case stream(StreamPlan)
    /// Not a failure: the request opens a WebSocket (`mock.websocket`), on the server.
    case websocket(WebSocketRoute)
    /// Not a failure: the handler waits (`mock.fetch`, `mock.sleep`); the door drives it to
    /// its answer with ``Engine/drive(_:client:hop:done:)``.
    case suspended(Suspension)

    /// Parses the script name of a fault (`"connection_reset"`, …).
    public init?(name: String, bytesPerSecond: Int? = nil) {
        switch name {
        case "connection_reset": self = .connectionReset
        case "empty_response": self = .emptyResponse
        case "malformed_chunk": self = .malformedChunk
        case "timeout": self = .timeout
        case "dribble": self = .dribble(bytesPerSecond: bytesPerSecond ?? 1024)
        default: return nil
        }
    }

    public static let names = ["connection_reset", "empty_response", "malformed_chunk", "timeout", "dribble"]

    public var description: String {
        switch self {
        case .connectionReset: return "connection_reset"
        case .emptyResponse: return "empty_response"
        case .malformedChunk: return "malformed_chunk"
        case .timeout: return "timeout"
        case .dribble(let n): return "dribble(\(n) B/s)"
        case .error(let failure): return "error(\(failure.error))"
        case .forward(let target): return target.description
        case .stream(let plan): return plan.description
        case .websocket(let route): return route.description
        case .suspended(let s): return "waiting for \(s)"
        }
    }
}

/// An error a stub asks the in-process transport to fail with. Equal when the descriptions are.
public struct TransportFailure: Sendable, Equatable {
    public let error: any Error & Sendable
    public init(_ error: any Error & Sendable) { self.error = error }
    public static func == (a: TransportFailure, b: TransportFailure) -> Bool {
        String(describing: a.error) == String(describing: b.error)
    }
}

/// A delay in milliseconds: fixed, uniform between bounds, or log-normal around a median.
public enum DelaySpec: Sendable, Equatable, CustomStringConvertible {
    case fixed(Double)
    case uniform(min: Double, max: Double)
    case logNormal(median: Double, sigma: Double)

    /// Draws one delay in milliseconds (never negative).
    public func sample(_ random: RandomSource) -> Double {
        switch self {
        case .fixed(let ms): return max(0, ms)
        case .uniform(let lo, let hi): return max(0, lo + (hi - lo) * random.unit())
        case .logNormal(let median, let sigma):
            // Box-Muller for a standard normal, then exp(mu + sigma * z) with mu = ln(median).
            let u1 = max(random.unit(), .leastNonzeroMagnitude), u2 = random.unit()
            let z = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            return max(0, median * exp(sigma * z))
        }
    }

    public var description: String {
        switch self {
        case .fixed(let ms): return "\(ms) ms"
        case .uniform(let lo, let hi): return "\(lo)–\(hi) ms"
        case .logNormal(let m, let s): return "log-normal(median \(m) ms, sigma \(s))"
        }
    }
}
