import Foundation
import Testing
@testable import MoonmockCore

/// Spans handed to it, for the engine's tests.
final class CollectedSpans: SpanSink, @unchecked Sendable {
    private let spans = Locked<[SpanRecord]>([])
    func submit(_ span: SpanRecord) { spans.withLock { $0.append(span) } }
    var statistics: SpanStatistics { SpanStatistics() }
    var all: [SpanRecord] { spans.withLock { $0 } }
}

/// An outbound client that answers at once and keeps what it was sent.
final class RecordingClient: OutboundClient, @unchecked Sendable {
    let sent = Locked<[OutboundRequest]>([])
    func send(_ request: OutboundRequest, completion: @escaping @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void) -> @Sendable () -> Void {
        sent.withLock { $0.append(request) }
        completion(request.url.contains("down") ? .failure(OutboundFailure("Connection refused")) : .success(OutboundResponse(status: 204)))
        return {}
    }
}

@Suite("Tracing")
struct TracingTests {
    @Test("traceparent: W3C's valid forms read back, the invalid ones refused")
    func traceparent() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let parsed = SpanContext(traceparent: text, tracestate: "a=1")
        #expect(parsed?.traceparent == text && parsed?.sampled == true && parsed?.traceState == "a=1")
        #expect(parsed?.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736" && parsed?.spanID == 0x00f0_67aa_0ba9_02b7)
        #expect(SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled == false)
        // A later version may carry more after a dash; version 00 may not.
        #expect(SpanContext(traceparent: text.replacingOccurrences(of: "00-4b", with: "cc-4b") + "-what-comes") != nil)
        for bad in [text + "-x", text.uppercased(), "ff" + text.dropFirst(2), "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
                    "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01", ""] {
            #expect(SpanContext(traceparent: String(bad)) == nil, "\(bad)")
        }
        let child = Tracer(sink: CollectedSpans()).span(parent: parsed, remote: true)
        #expect(child.context.traceIDHex == parsed!.traceIDHex && child.context.spanID != parsed!.spanID && child.context.traceState == "a=1")
        #expect(child.parentSpanID == parsed!.spanID && child.remoteParent)
    }

    @Test("samplers: parent-based follows the flag; a ratio keeps its share of trace ids, the same ids each time")
    func samplers() {
        let on = SpanContext(traceHigh: 1, traceLow: 2, spanID: 3, sampled: true), off = SpanContext(traceHigh: 1, traceLow: 2, spanID: 3, sampled: false)
        #expect(TraceSampler.parentBased(root: .alwaysOff).samples(on, traceLow: 9) && !TraceSampler.parentBased(root: .alwaysOn).samples(off, traceLow: 9))
        #expect(TraceSampler.parentBased(root: .alwaysOn).samples(nil, traceLow: 9) && !TraceSampler.alwaysOff.samples(on, traceLow: 9))
        var g = SeededRandom(seed: 7)
        let ids = (0..<10_000).map { _ in g.next() }
        let kept = ids.filter { TraceSampler.ratio(0.25).samples(nil, traceLow: $0) }
        #expect(kept.count > 2300 && kept.count < 2700)
        #expect(kept == ids.filter { TraceSampler.ratio(0.25).samples(nil, traceLow: $0) })
        #expect(ids.allSatisfy { TraceSampler.ratio(1).samples(nil, traceLow: $0) } && !ids.contains { TraceSampler.ratio(0).samples(nil, traceLow: $0) })
    }

    @Test("each request a server span: named after its rule, a child of its traceparent, its answer's attributes")
    func serverSpans() throws {
        let spans = CollectedSpans()
        let engine = Engine(tracer: Tracer(sink: spans))
        engine.setScriptRules(RuleSet([
            try Rule(method: "GET", pattern: RoutePattern("/users/:id"), location: "mocks.lua:4") { _ in .text("u") },
            try Rule(method: "GET", pattern: RoutePattern("/boom"), location: "mocks.lua:5") { _ in .text("no", status: 503) },
        ]))
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        _ = engine.handle(request("GET", "http://h:8080/users/7", headers: ["traceparent": parent]))
        _ = engine.handle(request("GET", "http://h/nowhere"))
        _ = engine.handle(request("GET", "http://h/boom", headers: ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"]))
        let all = spans.all
        try #require(all.count == 2)   // the unsampled one is not exported
        let user = all[0], unmatched = all[1]
        #expect(user.name == "GET /users/:id" && user.kind == .server && user.context.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(user.parentSpanID == 0x00f0_67aa_0ba9_02b7 && user.parentIsRemote && user.error == nil && user.end >= user.start)
        let a = Dictionary(user.attributes.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(a["http.route"] == .string("/users/:id") && a["http.response.status_code"] == .int(200) && a["server.port"] == .int(8080))
        #expect(a["code.file.path"] == .string("mocks.lua") && a["code.line.number"] == .int(4) && a["moonmock.door"] == .string("in-process"))
        #expect(unmatched.name == "GET" && unmatched.parentSpanID == nil && unmatched.context.traceIDHex != user.context.traceIDHex)
        _ = engine.handle(request("GET", "http://h/boom"))
        #expect(spans.all.last?.error == "HTTP 503" && spans.all.last?.name == "GET /boom")
    }

    @Test("a traced client sends traceparent naming its span, a child of the request's, and records it")
    func clientSpans() throws {
        let spans = CollectedSpans(), tracer = Tracer(sink: spans), base = RecordingClient()
        let client = TracedOutbound(base, tracer: tracer)
        let parent = SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")!
        var call = OutboundRequest(url: "http://127.0.0.1:9000/stock?sku=1")
        call.trace = OutboundTrace(parent: parent, kind: "fetch")
        _ = client.send(call) { _ in }
        var down = OutboundRequest(method: "POST", url: "http://down.example/hook")
        down.trace = OutboundTrace(parent: parent, kind: "webhook")
        down.headers["traceparent"] = "00-11111111111111111111111111111111-2222222222222222-01"
        _ = client.send(down) { _ in }
        _ = client.send(OutboundRequest(url: "http://127.0.0.1:9000/untraced")) { _ in }
        let sent = base.sent.withLock { $0 }, all = spans.all
        try #require(sent.count == 3 && all.count == 2)
        #expect(sent[0].headers["traceparent"] == "00-4bf92f3577b34da6a3ce929d0e0e4736-\(SpanContext.hex(all[0].context.spanID))-01")
        #expect(sent[1].headers["traceparent"] == "00-11111111111111111111111111111111-2222222222222222-01")   // the handler's own
        #expect(sent[2].headers["traceparent"] == nil)
        #expect(all[0].kind == .client && all[0].name == "GET" && all[0].parentSpanID == parent.spanID && !all[0].parentIsRemote)
        #expect(all[0].attributes.contains { $0.key == "http.response.status_code" && $0.value == .int(204) })
        #expect(all[0].attributes.contains { $0.key == "server.port" && $0.value == .int(9000) })
        #expect(all[1].error == "Connection refused" && all[1].attributes.contains { $0.key == "moonmock.call" && $0.value == .string("webhook") })
    }
}
