import Foundation
import MoonmockCodings
import MoonmockCore

/// Exports spans over OTLP/HTTP from a thread of its own, as OpenTelemetry's batch span
/// processor does: ``submit(_:)`` only appends to a bounded queue (a full queue drops the span
/// and counts it); the thread sends a batch when `maxExportBatchSize` spans wait or
/// `scheduleDelayMilliseconds` passed, one export at a time, each bounded by the timeout. A
/// batch the collector does not take (away, an error status) is dropped and counted, and the
/// first failure after a success is logged once, as is the recovery.
///
/// ```swift
/// let exporter = OTLPExporter(OTLPConfiguration(), client: CurlOutbound.shared) { print($0) }
/// let engine = Engine(tracer: Tracer(sampler: exporter.configuration.sampler, sink: exporter))
/// ```
public final class OTLPExporter: SpanSink, @unchecked Sendable {
    // @unchecked: every mutable field is under `condition`.
    public let configuration: OTLPConfiguration
    private let client: any OutboundClient
    private let log: @Sendable (String) -> Void
    private let condition = NSCondition()
    private var queue: [SpanRecord] = []
    private var stats = SpanStatistics()
    private var flushWanted = 0
    private var flushed = 0
    private var started = false
    private var failing = false
    private let resource: [(key: String, value: String)]

    public init(_ configuration: OTLPConfiguration, client: any OutboundClient, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.client = client
        self.log = log
        var resource = configuration.resource
        for (k, v) in [("service.version", MoonmockVersion.current), ("telemetry.sdk.name", "moonmock"), ("telemetry.sdk.language", "swift"),
                       ("telemetry.sdk.version", MoonmockVersion.current)] where !resource.contains(where: { $0.key == k }) {
            resource.append((k, v))
        }
        self.resource = resource
    }

    public func submit(_ span: SpanRecord) {
        condition.lock()
        defer { condition.unlock() }
        guard queue.count < configuration.maxQueueSize else {
            stats.droppedQueueFull += 1
            return
        }
        queue.append(span)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "moonmock.otlp"
            thread.start()
        }
        if queue.count >= configuration.maxExportBatchSize { condition.signal() }
    }

    public var statistics: SpanStatistics {
        condition.lock()
        defer { condition.unlock() }
        var s = stats
        s.queued = queue.count
        return s
    }

    /// Exports what is queued now and waits for it, at most `seconds` (the server's stop).
    /// Returns whether everything queued went out (or was dropped) in time.
    @discardableResult
    public func flush(seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        // Also with the queue empty: a batch may be on its way (the thread says when it is done).
        guard started else { return true }
        flushWanted += 1
        let mine = flushWanted
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while flushed < mine {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    private func run() {
        var lastExport = DispatchTime.now().uptimeNanoseconds
        while true {
            condition.lock()
            while true {
                let waited = Double(DispatchTime.now().uptimeNanoseconds - lastExport) / 1e6
                if queue.count >= configuration.maxExportBatchSize || flushWanted > flushed
                    || (!queue.isEmpty && waited >= Double(configuration.scheduleDelayMilliseconds)) { break }
                let left = queue.isEmpty ? Double(configuration.scheduleDelayMilliseconds) : Double(configuration.scheduleDelayMilliseconds) - waited
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.001, left / 1000)))
            }
            let batch = Array(queue.prefix(configuration.maxExportBatchSize))
            queue.removeFirst(batch.count)
            let flushing = flushWanted
            condition.unlock()
            export(batch)
            lastExport = DispatchTime.now().uptimeNanoseconds
            condition.lock()
            if queue.isEmpty { flushed = flushing }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// One POST of `batch`, waited for (bounded by the timeout); the outcome counted.
    private func export(_ batch: [SpanRecord]) {
        guard !batch.isEmpty else { return }
        var body = configuration.json ? OTLPEncoding.json(batch, resource: resource) : OTLPEncoding.protobuf(batch, resource: resource)
        var request = OutboundRequest(method: "POST", url: configuration.endpoint, body: [], timeoutMilliseconds: configuration.timeoutMilliseconds)
        request.headers["Content-Type"] = configuration.json ? "application/json" : "application/x-protobuf"
        if configuration.gzip, let zipped = try? ContentEncoding.gzip(body) {
            body = zipped
            request.headers["Content-Encoding"] = "gzip"
        }
        request.body = body
        for (name, value) in configuration.headers { request.headers[name] = value }
        // OTLP's retryable failures (no answer, 429, 502, 503, 504) are tried twice more, 250 ms
        // then 500 ms later (a Retry-After of up to 5 s is honoured); others drop the batch.
        var failure: String?
        for attempt in 0..<3 {
            let (error, retryAfter) = post(request)
            failure = error
            guard let retryAfter, attempt < 2 else { break }
            Thread.sleep(forTimeInterval: max(retryAfter, 0.25 * Double(1 << attempt)))
        }
        condition.lock()
        if failure == nil {
            stats.exported += batch.count
        } else {
            stats.droppedExportFailed += batch.count
            stats.failedExports += 1
        }
        let wasFailing = failing
        failing = failure != nil
        condition.unlock()
        if let failure, !wasFailing {
            log("traces: export to \(configuration.endpoint) failed (\(failure.trimmingCharacters(in: .whitespacesAndNewlines))); spans are dropped and counted until it answers")
        } else if failure == nil, wasFailing {
            log("traces: \(configuration.endpoint) takes spans again")
        }
    }

    /// One POST: `nil` when the collector took it, else why not and, when that is worth another
    /// try, how long to wait first (seconds).
    private func post(_ request: OutboundRequest) -> (String?, Double?) {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<(String?, Double?)>(("no answer within \(configuration.timeoutMilliseconds) ms", 0))
        let cancel = client.send(request) { result in
            switch result {
            case .success(let response) where (200..<300).contains(response.status): outcome.withLock { $0 = (nil, nil) }
            case .success(let response):
                let text = String(decoding: response.body.prefix(200), as: UTF8.self).filter { $0.isASCII && !$0.isNewline }
                let retry = [429, 502, 503, 504].contains(response.status)
                let after = response.headers["retry-after"].flatMap(Double.init).map { min($0, 5) } ?? 0
                outcome.withLock { $0 = ("HTTP \(response.status)" + (text.isEmpty ? "" : " " + text), retry ? after : nil) }
            case .failure(let failure): outcome.withLock { $0 = (failure.description, 0) }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + .milliseconds(configuration.timeoutMilliseconds + 1000)) == .timedOut { cancel() }
        return outcome.withLock { $0 }
    }
}
