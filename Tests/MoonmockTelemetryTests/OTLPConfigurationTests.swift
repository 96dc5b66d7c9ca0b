import Foundation
import MoonmockCodings
import MoonmockCore
import MoonmockProto
import Testing
@testable import MoonmockTelemetry

@Suite("OTLP configuration")
struct OTLPConfigurationTests {
    @Test("off without an endpoint; the base endpoint gets /v1/traces, the traces one is used as given")
    func endpoints() {
        #expect(!OTLPConfiguration(environment: [:]).enabled)
        let base = OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"])
        #expect(base.enabled && base.endpoint == "http://collector:4318/v1/traces" && base.warnings.isEmpty)
        let full = OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/otlp/traces"])
        #expect(full.endpoint == "https://b/otlp/traces")
        #expect(OTLPConfiguration(environment: ["OTEL_TRACES_EXPORTER": "otlp"]).endpoint == "http://localhost:4318/v1/traces")
        #expect(OTLPConfiguration(environment: ["OTEL_TRACES_EXPORTER": "otlp"]).enabled)
        #expect(!OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_SDK_DISABLED": "true"]).enabled)
        #expect(!OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_EXPORTER": "none"]).enabled)
        let ftp = OTLPConfiguration(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://a"])
        #expect(!ftp.enabled && ftp.warnings == ["OTEL_EXPORTER_OTLP_ENDPOINT=ftp://a: not an http:// or https:// URL; traces are not exported"])
    }

    @Test("headers, resource, protocol, compression, sampler and batch settings; bad values warn and keep the default")
    func settings() {
        let c = OTLPConfiguration(environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%20e,x=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "X=2",
            "OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,deployment.environment=ci", "OTEL_SERVICE_NAME": "pay",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT": "250",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1", "OTEL_BSP_MAX_QUEUE_SIZE": "100",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "500", "OTEL_BSP_SCHEDULE_DELAY": "50",
        ])
        #expect(c.headers.map { "\($0.name)=\($0.value)" } == ["api-key=s e", "X=2"])
        #expect(c.resource.map { "\($0.key)=\($0.value)" } == ["service.name=pay", "deployment.environment=ci"])
        #expect(c.json && c.gzip && c.timeoutMilliseconds == 250 && c.sampler == .parentBased(root: .ratio(0.1)))
        #expect(c.maxQueueSize == 100 && c.maxExportBatchSize == 100 && c.scheduleDelayMilliseconds == 50 && c.warnings.isEmpty)
        #expect(c.summary == "traces: OTLP http/json gzip to http://a/v1/traces as pay")
        let bad = OTLPConfiguration(environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2",
            "OTEL_BSP_MAX_QUEUE_SIZE": "lots", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_HEADERS": "novalue",
            "OTEL_PROPAGATORS": "b3",
        ])
        #expect(bad.enabled && bad.sampler == .ratio(1) && bad.maxQueueSize == 2048 && !bad.json)
        #expect(bad.resource.map(\.key) == ["service.name"] && bad.resource[0].value == "moonmock")
        #expect(bad.warnings.count == 5)
        #expect(bad.warnings.contains("OTEL_TRACES_SAMPLER_ARG=2: not a ratio from 0 to 1; using 1"))
        #expect(bad.warnings.contains("OTEL_BSP_MAX_QUEUE_SIZE=lots: not a whole number of at least 1; using 2048"))
        #expect(bad.warnings.contains { $0.hasPrefix("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: spans are exported over OTLP/HTTP only") })
        #expect(bad.warnings.contains("OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value; ignored"))
        #expect(bad.warnings.contains("OTEL_PROPAGATORS=b3: only tracecontext (traceparent, tracestate) is read and sent"))
    }

    @Test("a gzipped export decodes back")
    func gzip() throws {
        let spans = [SpanRecord(context: SpanContext(traceHigh: 1, traceLow: 2, spanID: 3, sampled: true), parentSpanID: nil, parentIsRemote: false,
                                name: "GET /x", kind: .server, start: 1, end: 2, attributes: [.init("k", .bool(true))])]
        let body = OTLPEncoding.protobuf(spans, resource: [("service.name", "m")])
        #expect(try ContentDecoding.decode(try ContentEncoding.gzip(body), contentEncodings: ["gzip"]) == body)
        let json = try JSONValue(parsing: OTLPEncoding.json(spans, resource: []))
        let span = json["resourceSpans"]?[0]?["scopeSpans"]?[0]?["spans"]?[0]
        #expect(span?["traceId"] == .string("00000000000000010000000000000002") && span?["spanId"] == .string("0000000000000003"))
        #expect(span?["kind"] == .integer(2) && span?["startTimeUnixNano"] == .string("1") && span?["parentSpanId"] == nil)
    }

    @Test("lengths of every size are written as protobuf reads them back (one-, two- and three-byte varints)")
    func protobufLengths() throws {
        for n in [0, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let long = String(repeating: "x", count: n)
            let span = SpanRecord(context: SpanContext(traceHigh: .max, traceLow: 2, spanID: 3, sampled: true, traceState: n > 0 ? "v=1" : nil),
                                  parentSpanID: 9, parentIsRemote: true, name: long, kind: .client, start: 5, end: 6,
                                  attributes: [.init("s", .string(long)), .init("i", .int(-1)), .init("d", .double(1.5)), .init("b", .bool(false)), .init(long, .int(300))],
                                  error: n.isMultiple(of: 2) ? long : nil)
            let bytes = OTLPEncoding.protobuf([span, span], resource: [("service.name", long)])
            // ExportTraceServiceRequest → ResourceSpans → ScopeSpans → Span, each read to its exact end.
            var request = ProtoReader(bytes)
            guard case (1, .lengthDelimited)? = try request.tag() else { Issue.record("no resource_spans"); return }
            var resourceSpans = request.nested(try request.lengthDelimited())
            #expect(request.isAtEnd)
            _ = try resourceSpans.tag()
            var resource = resourceSpans.nested(try resourceSpans.lengthDelimited())
            _ = try resource.tag()
            var kv = resource.nested(try resource.lengthDelimited())
            _ = try kv.tag()
            #expect(try kv.lengthDelimited().count == "service.name".utf8.count)
            _ = try resourceSpans.tag()
            var scopeSpans = resourceSpans.nested(try resourceSpans.lengthDelimited())
            #expect(resourceSpans.isAtEnd)
            var names: [Int] = []
            while let (field, type) = try scopeSpans.tag() {
                let range = try scopeSpans.lengthDelimited()
                guard field == 2 else { continue }
                var s = scopeSpans.nested(range)
                while let (f, t) = try s.tag() {
                    if f == 5 { names.append(try s.lengthDelimited().count) } else { try s.skip(t, number: f) }
                }
                _ = type
            }
            #expect(names == [n, n], "\(n)")
        }
    }
}
