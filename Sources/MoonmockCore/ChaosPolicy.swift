import Foundation

/// A bad day of a real API, as settings: errors at a rate, slow answers, transport faults and a
/// rate limit, on every request, a path prefix, a host or one rule. Written in scripts as
/// `mock.chaos{...}`, a rule's `chaos = {...}` or a profile, and sent to `PUT /__moonmock/chaos`
/// as the same JSON.
///
/// ```swift
/// let policy = try ChaosPolicy(json: try JSONValue(parsing: Array(#"{"error_rate": 0.1, "status": 503}"#.utf8)))
/// ```
public struct ChaosPolicy: Sendable, Equatable {
    /// How slow answers are: uniform between bounds, or log-normal by its median and 99th percentile.
    public enum Latency: Sendable, Equatable {
        case uniform(min: Double, max: Double)
        case logNormal(median: Double, p99: Double)
    }

    public var errorRate = 0.0
    public var status = 503
    /// The error answer's body (JSON when it was a table, else text); a JSON error by default.
    public var body: JSONValue?
    public var latency: Latency?
    public var fault: Fault?
    public var faultRate = 0.0
    /// Requests per second allowed, and how many may come at once.
    public var rateLimit: (rps: Double, burst: Int)?
    /// Where it applies (``ChaosController`` layers only): a path prefix, a host.
    public var path: String?
    public var host: String?

    /// A setting that is wrong, said as the script or the admin API shows it.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public static let keys: Set<String> = ["error_rate", "status", "body", "latency", "fault", "fault_rate", "rate_limit", "path", "host"]

    public init() {}

    /// Reads the settings; `scoped`: `path` and `host` are allowed (a layer, not a rule's).
    public init(json: JSONValue, scoped: Bool = true, extraKeys: Set<String> = []) throws {
        guard case .object(let o) = json else { throw Invalid(description: "chaos settings must be an object such as { error_rate = 0.1 }") }
        for key in o.keys.sorted() where !Self.keys.contains(key) && !extraKeys.contains(key) {
            let near = EditDistance.nearest(to: key, among: Self.keys)
            throw Invalid(description: "chaos: unknown setting '\(key)'" + (near.map { "; did you mean '\($0)'?" } ?? "")
                          + " (error_rate, status, body, latency, fault, fault_rate, rate_limit, path, host)")
        }
        func rate(_ key: String) throws -> Double {
            guard let v = o[key] else { return 0 }
            guard let x = Self.number(v), (0...1).contains(x) else { throw Invalid(description: "chaos: \(key) is a fraction from 0 to 1 (0.1 is 10 %), got \(v.shown)") }
            return x
        }
        errorRate = try rate("error_rate")
        faultRate = try rate("fault_rate")
        if let v = o["status"] {
            guard case .integer(let s) = v, (200...599).contains(s) else { throw Invalid(description: "chaos: status must be an integer from 200 to 599, got \(v.shown)") }
            status = Int(s)
        }
        body = o["body"]
        if let v = o["fault"] {
            guard let name = v.stringValue, let f = Fault(name: name) else {
                throw Invalid(description: "chaos: fault must be one of \(Fault.names.joined(separator: ", ")), got \(v.shown)")
            }
            fault = f
            if o["fault_rate"] == nil { faultRate = 1 }
        } else if faultRate > 0 {
            throw Invalid(description: "chaos: fault_rate needs a fault (such as fault = \"connection_reset\")")
        }
        if let v = o["latency"] { latency = try Self.latency(v) }
        if let v = o["rate_limit"] {
            guard case .object(let r) = v, let rps = r["rps"].flatMap(Self.number), rps > 0 else {
                throw Invalid(description: "chaos: rate_limit must be { rps = N, burst = M } with rps more than 0")
            }
            var burst = Int(max(1, rps.rounded(.up)))
            if let b = r["burst"] {
                guard case .integer(let n) = b, n >= 1 else { throw Invalid(description: "chaos: rate_limit.burst must be an integer from 1") }
                burst = Int(n)
            }
            rateLimit = (rps, burst)
        }
        if let v = o["path"] {
            guard scoped else { throw Invalid(description: "chaos: a rule's chaos has no path (it is the rule's)") }
            guard let p = v.stringValue, p.hasPrefix("/") else { throw Invalid(description: "chaos: path is a prefix starting with /, got \(v.shown)") }
            path = p
        }
        if let v = o["host"] {
            guard scoped else { throw Invalid(description: "chaos: a rule's chaos has no host (it is the rule's)") }
            guard let h = v.stringValue, !h.isEmpty else { throw Invalid(description: "chaos: host must be a host name") }
            host = h.lowercased()
        }
        guard errorRate > 0 || faultRate > 0 || latency != nil || rateLimit != nil else {
            throw Invalid(description: "chaos: nothing to do: give error_rate, latency, fault or rate_limit")
        }
    }

    static func latency(_ v: JSONValue) throws -> Latency {
        guard case .object(let l) = v else { throw Invalid(description: "chaos: latency must be { min =, max = } or { dist = \"lognormal\", median =, p99 = } (milliseconds)") }
        if let dist = l["dist"], dist.stringValue != "lognormal" && dist.stringValue != "uniform" {
            throw Invalid(description: "chaos: latency.dist is \"lognormal\" or \"uniform\", got \(dist.shown)")
        }
        if l["dist"]?.stringValue == "lognormal" || l["median"] != nil {
            guard let median = l["median"].flatMap(Self.number), median > 0 else { throw Invalid(description: "chaos: latency.median must be a number of milliseconds more than 0") }
            let p99 = l["p99"].flatMap(Self.number) ?? median * 4
            guard p99 >= median else { throw Invalid(description: "chaos: latency.p99 must be at least the median") }
            return .logNormal(median: median, p99: p99)
        }
        guard let low = l["min"].flatMap(Self.number), let high = l["max"].flatMap(Self.number), low >= 0, high >= low else {
            throw Invalid(description: "chaos: latency needs min and max (milliseconds, min at most max), or median and p99")
        }
        return .uniform(min: low, max: high)
    }

    /// A JSON number as a `Double` (`nil` for anything else).
    public static func number(_ v: JSONValue) -> Double? {
        switch v {
        case .integer(let n): return Double(n)
        case .double(let x) where x.isFinite: return x
        default: return nil
        }
    }

    /// The settings as JSON (what `GET /__moonmock/chaos` shows).
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if errorRate > 0 { o["error_rate"] = .double(errorRate); o["status"] = .integer(Int64(status)) }
        if let body { o["body"] = body }
        if let fault { o["fault"] = .string(fault.description); o["fault_rate"] = .double(faultRate) }
        switch latency {
        case .uniform(let lo, let hi)?: o["latency"] = .object(["min": .double(lo), "max": .double(hi)])
        case .logNormal(let m, let p)?: o["latency"] = .object(["dist": .string("lognormal"), "median": .double(m), "p99": .double(p)])
        case nil: break
        }
        if let r = rateLimit { o["rate_limit"] = .object(["rps": .double(r.rps), "burst": .integer(Int64(r.burst))]) }
        if let path { o["path"] = .string(path) }
        if let host { o["host"] = .string(host) }
        return .object(o)
    }

    public static func == (a: ChaosPolicy, b: ChaosPolicy) -> Bool { a.json == b.json }

    /// Whether it applies to `request` (its path prefix and host).
    func applies(to request: MockRequest) -> Bool {
        if let path, !request.path.hasPrefix(path) { return false }
        if let host, request.host.lowercased() != host { return false }
        return true
    }
}

extension JSONValue {
    /// The value as JSON text, for messages.
    var shown: String { String(decoding: encoded(), as: UTF8.self) }
}
