import Foundation
import MoonmockCore

/// `GET /__moonmock/metrics`: Prometheus's text exposition format 0.0.4 (behind the admin
/// API's guards; `--metrics off` turns it off). What a scrape sums is counted as requests are
/// answered (``RequestMetrics``); gauges are read at the scrape.
extension AdminAPI {
    func metrics(_ server: MoonmockServer) -> MockResponse {
        guard server.configuration.metrics else { return Self.error("metrics are off (moonmock serve --metrics off)", 404) }
        var out = MetricsText()
        let samples = engine.requestMetrics.samples()
        out.family("moonmock_requests_total", "counter", "Requests answered, by rule (empty: none matched), method, status (0: a fault) and door.")
        for s in samples {
            out.sample("moonmock_requests_total", [("rule", s.rule ?? ""), ("method", s.method), ("status", String(s.status)), ("door", s.door)], s.count)
        }
        out.family("moonmock_unmatched_requests_total", "counter", "Requests no rule answered.")
        out.sample("moonmock_unmatched_requests_total", [], samples.filter { $0.rule == nil }.reduce(0) { $0 + $1.count })
        out.family("moonmock_handler_errors_total", "counter", "Answers whose handler failed (an error or a stopped budget: the 500 names it), by rule.")
        var errors: [String: Int] = [:]
        for s in samples where s.errors > 0 { errors[s.rule ?? "", default: 0] += s.errors }
        for (rule, n) in errors.sorted(by: { $0.key < $1.key }) { out.sample("moonmock_handler_errors_total", [("rule", rule)], n) }
        // Server time per rule and door (the answer's delay not included).
        out.family("moonmock_request_duration_seconds", "histogram", "Time the server took to answer (without the answer's delay), by rule and door.")
        var grouped: [String: (rule: String, door: String, buckets: [Int], micros: Int, count: Int)] = [:]
        for s in samples {
            let key = (s.rule ?? "") + "\u{0}" + s.door
            var g = grouped[key] ?? (s.rule ?? "", s.door, [Int](repeating: 0, count: RequestMetrics.bounds.count + 1), 0, 0)
            for i in g.buckets.indices { g.buckets[i] += s.buckets[i] }
            g.micros += s.micros
            g.count += s.count
            grouped[key] = g
        }
        for (_, g) in grouped.sorted(by: { $0.key < $1.key }) {
            var cumulative = 0
            for (i, bound) in (RequestMetrics.bounds.map { MetricsText.number($0) } + ["+Inf"]).enumerated() {
                cumulative += g.buckets[i]
                out.sample("moonmock_request_duration_seconds_bucket", [("rule", g.rule), ("door", g.door), ("le", bound)], cumulative)
            }
            out.sample("moonmock_request_duration_seconds_sum", [("rule", g.rule), ("door", g.door)], Double(g.micros) / 1e6)
            out.sample("moonmock_request_duration_seconds_count", [("rule", g.rule), ("door", g.door)], g.count)
        }
        out.family("moonmock_open_connections", "gauge", "Client connections open.")
        out.sample("moonmock_open_connections", [], server.connectionsPerWorker.reduce(0, +))
        out.family("moonmock_open_streams", "gauge", "Streamed answers (SSE, mock.stream, mock.llm, gRPC streams) being sent.")
        out.sample("moonmock_open_streams", [], server.openStreams)
        out.family("moonmock_open_websockets", "gauge", "WebSockets (and live gRPC calls) open.")
        out.sample("moonmock_open_websockets", [], engine.websockets.list().count)
        out.family("moonmock_requests_in_flight", "gauge", "Requests being answered (delayed and held ones included).")
        out.sample("moonmock_requests_in_flight", [], server.requestsInFlight)
        out.family("moonmock_journal_entries", "gauge", "Requests the journal keeps.")
        out.sample("moonmock_journal_entries", [], engine.journal.entries().count)
        if let script = server.scriptStatus?() {
            func integer(_ key: String) -> Int? { if case .integer(let n)? = script[key] { return Int(n) } else { return nil } }
            let generation = integer("generation") ?? 1, failures = integer("reload_failures") ?? 0
            out.family("moonmock_reloads_total", "counter", "Reloads of the script that succeeded.")
            out.sample("moonmock_reloads_total", [], max(0, generation - 1))
            out.family("moonmock_reload_failures_total", "counter", "Reloads of the script that failed (the last good version kept serving).")
            out.sample("moonmock_reload_failures_total", [], failures)
        }
        if let store = engine.store {
            let health = store.health
            func number(_ key: String) -> Double {
                switch health[key] { case .integer(let n)?: return Double(n); case .double(let d)?: return d; default: return 0 }
            }
            out.family("moonmock_store_up", "gauge", "1 while the shared store (--store) answers, else 0.")
            out.sample("moonmock_store_up", [], health["status"]?.stringValue == "ok" ? 1 : 0)
            out.family("moonmock_store_ping_seconds", "gauge", "The shared store's last PING round trip.")
            out.sample("moonmock_store_ping_seconds", [], number("latency_ms") / 1000)
            out.family("moonmock_store_errors_total", "counter", "Connection errors of the shared store's pool.")
            out.sample("moonmock_store_errors_total", [], Int(number("errors")))
            out.family("moonmock_store_outages_total", "counter", "Times the shared store went away.")
            out.sample("moonmock_store_outages_total", [], Int(number("outages")))
            out.family("moonmock_store_journal_backlog", "gauge", "Journal entries waiting to be written to the shared store.")
            out.sample("moonmock_store_journal_backlog", [], Int(number("journal_backlog")))
            if let latency = store.channelLatency {
                out.family("moonmock_store_command_duration_seconds", "histogram", "Time the event loops' store commands (mock.state in handlers) waited for their reply.")
                var cumulative = 0
                for (i, bound) in (RequestMetrics.bounds.map { MetricsText.number($0) } + ["+Inf"]).enumerated() {
                    cumulative += latency.buckets[i]
                    out.sample("moonmock_store_command_duration_seconds_bucket", [("le", bound)], cumulative)
                }
                out.sample("moonmock_store_command_duration_seconds_sum", [], Double(latency.micros) / 1e6)
                out.sample("moonmock_store_command_duration_seconds_count", [], latency.count)
                out.family("moonmock_store_command_failures_total", "counter", "The event loops' store commands that got no reply (connection lost, or past --store-timeout): their requests answered 503.")
                out.sample("moonmock_store_command_failures_total", [], latency.failures)
            }
        }
        if let tracer = engine.tracer {
            // OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): what became of the spans.
            let t = tracer.sink.statistics
            out.family("moonmock_trace_spans_exported_total", "counter", "Spans the OTLP collector took.")
            out.sample("moonmock_trace_spans_exported_total", [], t.exported)
            out.family("moonmock_trace_spans_dropped_total", "counter", "Spans dropped: the queue was full (queue_full) or the collector did not take their batch (export_failed).")
            out.sample("moonmock_trace_spans_dropped_total", [("reason", "queue_full")], t.droppedQueueFull)
            out.sample("moonmock_trace_spans_dropped_total", [("reason", "export_failed")], t.droppedExportFailed)
            out.family("moonmock_trace_export_failures_total", "counter", "Exports to the OTLP collector that failed (away, timed out or an error status).")
            out.sample("moonmock_trace_export_failures_total", [], t.failedExports)
            out.family("moonmock_trace_spans_queued", "gauge", "Spans waiting to be exported.")
            out.sample("moonmock_trace_spans_queued", [], t.queued)
        }
        var response = MockResponse(status: 200, body: Array(out.text.utf8))
        response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
        return response
    }
}

/// Prometheus's text format, written line by line.
struct MetricsText {
    var text = ""

    mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) { sample(name, labels, String(value)) }
    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) { sample(name, labels, Self.number(value)) }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty { text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}" }
        text += " " + value + "\n"
    }

    static func number(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }

    /// A label value's backslashes, quotes and line feeds escaped.
    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
