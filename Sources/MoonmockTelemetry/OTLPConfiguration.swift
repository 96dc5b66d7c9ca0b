import Foundation
import MoonmockCore

/// Where and how spans are exported, read from OpenTelemetry's standard environment variables:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`), `…_PROTOCOL` (`http/protobuf`,
/// `http/json`), `…_HEADERS`, `…_COMPRESSION` (`gzip`), `…_TIMEOUT`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and `…_ARG`, `OTEL_BSP_*`,
/// `OTEL_TRACES_EXPORTER` and `OTEL_SDK_DISABLED`. A value that cannot be used is reported in
/// ``warnings`` and its default kept, as OpenTelemetry's SDKs do.
///
/// ```swift
/// let config = OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"])
/// config.endpoint   // "http://127.0.0.1:4318/v1/traces"
/// ```
public struct OTLPConfiguration: Sendable {
    /// Whether traces are exported at all: an endpoint is set (or `OTEL_TRACES_EXPORTER=otlp`),
    /// and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` says otherwise.
    public var enabled = false
    /// The full URL spans are posted to.
    public var endpoint = "http://localhost:4318/v1/traces"
    /// `http/json` rather than `http/protobuf`.
    public var json = false
    public var headers: [(name: String, value: String)] = []
    public var gzip = false
    public var timeoutMilliseconds = 10_000
    public var resource: [(key: String, value: String)] = []
    public var sampler: TraceSampler = .parentBased(root: .alwaysOn)
    /// The batch processor's settings: how long spans wait for company, how many wait at most
    /// (more are dropped), and how many go in one export.
    public var scheduleDelayMilliseconds = 5000
    public var maxQueueSize = 2048
    public var maxExportBatchSize = 512
    public var warnings: [String] = []

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        func traces(_ suffix: String) -> (name: String, value: String)? {
            for name in ["OTEL_EXPORTER_OTLP_TRACES_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix] { if let v = value(name) { return (name, v) } }
            return nil
        }
        let exporter = value("OTEL_TRACES_EXPORTER")?.lowercased()
        if let exporter, exporter != "otlp", exporter != "none" {
            warnings.append("OTEL_TRACES_EXPORTER=\(exporter): only otlp (or none) is supported; traces are not exported")
        }
        if let url = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = url
        } else if let base = value("OTEL_EXPORTER_OTLP_ENDPOINT") {
            endpoint = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/v1/traces"
        }
        enabled = (traces("ENDPOINT") != nil && exporter == nil) || exporter == "otlp"
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" { enabled = false }
        if !endpoint.lowercased().hasPrefix("http://") && !endpoint.lowercased().hasPrefix("https://") {
            let given = traces("ENDPOINT").map { "\($0.name)=\($0.value)" } ?? endpoint
            warnings.append("\(given): not an http:// or https:// URL; traces are not exported")
            enabled = false
        }
        if let (name, p) = traces("PROTOCOL") {
            switch p.lowercased() {
            case "http/protobuf": json = false
            case "http/json": json = true
            case "grpc": warnings.append("\(name)=grpc: spans are exported over OTLP/HTTP only; sending http/protobuf to \(endpoint) (a collector's OTLP/HTTP port is 4318)")
            default: warnings.append("\(name)=\(p): not http/protobuf or http/json; using http/protobuf")
            }
        }
        for name in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            guard let list = value(name) else { continue }
            for (k, v) in Self.pairs(list, name, &warnings) {
                headers.removeAll { $0.name.lowercased() == k.lowercased() }
                headers.append((k, v))
            }
        }
        if let (name, c) = traces("COMPRESSION") {
            switch c.lowercased() {
            case "gzip": gzip = true
            case "none": gzip = false
            default: warnings.append("\(name)=\(c): not gzip or none; not compressing")
            }
        }
        if let (name, t) = traces("TIMEOUT") { timeoutMilliseconds = Self.number(t, name, at: 1, default: timeoutMilliseconds, &warnings) }
        if let list = value("OTEL_RESOURCE_ATTRIBUTES") { resource = Self.pairs(list, "OTEL_RESOURCE_ATTRIBUTES", &warnings) }
        if let service = value("OTEL_SERVICE_NAME") {
            resource.removeAll { $0.key == "service.name" }
            resource.insert(("service.name", service), at: 0)
        } else if !resource.contains(where: { $0.key == "service.name" }) {
            resource.insert(("service.name", "moonmock"), at: 0)
        }
        sampler = Self.sampler(value("OTEL_TRACES_SAMPLER"), value("OTEL_TRACES_SAMPLER_ARG"), &warnings)
        if let d = value("OTEL_BSP_SCHEDULE_DELAY") { scheduleDelayMilliseconds = Self.number(d, "OTEL_BSP_SCHEDULE_DELAY", at: 0, default: 5000, &warnings) }
        if let q = value("OTEL_BSP_MAX_QUEUE_SIZE") { maxQueueSize = Self.number(q, "OTEL_BSP_MAX_QUEUE_SIZE", at: 1, default: 2048, &warnings) }
        if let b = value("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") { maxExportBatchSize = Self.number(b, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", at: 1, default: 512, &warnings) }
        maxExportBatchSize = min(maxExportBatchSize, maxQueueSize)
        if let propagators = value("OTEL_PROPAGATORS"), !propagators.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "tracecontext" }) {
            warnings.append("OTEL_PROPAGATORS=\(propagators): only tracecontext (traceparent, tracestate) is read and sent")
        }
    }

    /// `key=value,key=value`, values percent-decoded (W3C Baggage's format, as the
    /// specification uses for headers and resource attributes).
    static func pairs(_ list: String, _ name: String, _ warnings: inout [String]) -> [(String, String)] {
        var out: [(String, String)] = []
        for item in list.split(separator: ",") {
            guard let eq = item.firstIndex(of: "=") else {
                warnings.append("\(name): '\(item)' is not key=value; ignored")
                continue
            }
            let key = item[..<eq].trimmingCharacters(in: .whitespaces)
            let raw = item[item.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { continue }
            out.append((key, raw.removingPercentEncoding ?? raw))
        }
        return out
    }

    private static func number(_ text: String, _ name: String, at least: Int, default fallback: Int, _ warnings: inout [String]) -> Int {
        guard let n = Int(text), n >= least else {
            warnings.append("\(name)=\(text): not a whole number of at least \(least); using \(fallback)")
            return fallback
        }
        return n
    }

    private static func sampler(_ name: String?, _ arg: String?, _ warnings: inout [String]) -> TraceSampler {
        func ratio() -> Double {
            guard let arg else { return 1 }
            guard let r = Double(arg), r >= 0, r <= 1 else {
                warnings.append("OTEL_TRACES_SAMPLER_ARG=\(arg): not a ratio from 0 to 1; using 1")
                return 1
            }
            return r
        }
        switch name?.lowercased() {
        case nil, "parentbased_always_on": return .parentBased(root: .alwaysOn)
        case "always_on": return .alwaysOn
        case "always_off": return .alwaysOff
        case "traceidratio": return .ratio(ratio())
        case "parentbased_always_off": return .parentBased(root: .alwaysOff)
        case "parentbased_traceidratio": return .parentBased(root: .ratio(ratio()))
        case let other?:
            warnings.append("OTEL_TRACES_SAMPLER=\(other): not always_on, always_off, traceidratio or a parentbased_ one; using parentbased_always_on")
            return .parentBased(root: .alwaysOn)
        }
    }

    /// One line for the server's start: where spans go, and how.
    public var summary: String {
        "traces: OTLP \(json ? "http/json" : "http/protobuf")\(gzip ? " gzip" : "") to \(endpoint) as \(resource.first { $0.key == "service.name" }?.value ?? "moonmock")"
    }
}
