import Foundation
import MoonmockCore
import MoonmockProto

/// Spans as an OTLP `ExportTraceServiceRequest` (opentelemetry-proto's
/// `collector/trace/v1`): protobuf for `http/protobuf`, and OTLP's JSON mapping (ids as hex,
/// enums as numbers, 64-bit integers as strings) for `http/json`.
///
/// ```swift
/// let body = OTLPEncoding.protobuf(spans, resource: [("service.name", "moonmock")])
/// ```
public enum OTLPEncoding {
    /// The instrumentation scope every span is reported under.
    static let scope = "moonmock"

    public static func protobuf(_ spans: [SpanRecord], resource: [(key: String, value: String)]) -> [UInt8] {
        var resourceMessage = ProtoWriter()
        for (k, v) in resource { resourceMessage.message(1, keyValue(k, .string(v))) }
        var scopeMessage = ProtoWriter()
        scopeMessage.string(1, scope)
        scopeMessage.string(2, MoonmockVersion.current)
        var scopeSpans = ProtoWriter()
        scopeSpans.message(1, scopeMessage.bytes)
        for span in spans { scopeSpans.message(2, encode(span)) }
        var resourceSpans = ProtoWriter()
        resourceSpans.message(1, resourceMessage.bytes)
        resourceSpans.message(2, scopeSpans.bytes)
        var request = ProtoWriter()
        request.message(1, resourceSpans.bytes)
        return request.bytes
    }

    private static func encode(_ span: SpanRecord) -> [UInt8] {
        var w = ProtoWriter()
        w.message(1, traceID(span.context))
        w.message(2, id(span.context.spanID))
        if let state = span.context.traceState { w.string(3, state) }
        if let parent = span.parentSpanID { w.message(4, id(parent)) }
        w.string(5, span.name)
        w.tag(6, .varint)
        w.varint(UInt64(span.kind.rawValue))
        w.tag(7, .fixed64)
        w.fixed64(span.start)
        w.tag(8, .fixed64)
        w.fixed64(span.end)
        for (k, v) in span.attributes { w.message(9, keyValue(k, v)) }
        if let error = span.error {
            var status = ProtoWriter()
            if !error.isEmpty { status.string(2, error) }
            status.tag(3, .varint)
            status.varint(2)   // STATUS_CODE_ERROR
            w.message(15, status.bytes)
        }
        w.tag(16, .fixed32)
        w.fixed32(flags(span))
        return w.bytes
    }

    private static func keyValue(_ key: String, _ value: SpanValue) -> [UInt8] {
        var any = ProtoWriter()
        switch value {
        case .string(let s): any.string(1, s)
        case .bool(let b): any.tag(2, .varint); any.varint(b ? 1 : 0)
        case .int(let n): any.tag(3, .varint); any.varint(UInt64(bitPattern: n))
        case .double(let d): any.tag(4, .fixed64); any.fixed64(d.bitPattern)
        }
        var kv = ProtoWriter()
        kv.string(1, key)
        kv.message(2, any.bytes)
        return kv.bytes
    }

    /// The W3C flags (sampled) and OTLP's bits saying whether the parent is remote.
    private static func flags(_ span: SpanRecord) -> UInt32 {
        (span.context.sampled ? 1 : 0) | 0x100 | (span.parentIsRemote ? 0x200 : 0)
    }

    private static func traceID(_ c: SpanContext) -> [UInt8] { id(c.traceHigh) + id(c.traceLow) }

    private static func id(_ n: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: n >> (56 - 8 * UInt64($0))) } }

    // MARK: JSON

    public static func json(_ spans: [SpanRecord], resource: [(key: String, value: String)]) -> [UInt8] {
        func attributes(_ list: [(key: String, value: SpanValue)]) -> JSONValue {
            .array(list.map { k, v in
                let value: JSONValue
                switch v {
                case .string(let s): value = .object(["stringValue": .string(s)])
                case .bool(let b): value = .object(["boolValue": .bool(b)])
                case .int(let n): value = .object(["intValue": .string(String(n))])
                case .double(let d): value = .object(["doubleValue": .double(d)])
                }
                return .object(["key": .string(k), "value": value])
            })
        }
        let list: [JSONValue] = spans.map { span in
            var o: [String: JSONValue] = [
                "traceId": .string(span.context.traceIDHex), "spanId": .string(SpanContext.hex(span.context.spanID)),
                "name": .string(span.name), "kind": .integer(Int64(span.kind.rawValue)),
                "startTimeUnixNano": .string(String(span.start)), "endTimeUnixNano": .string(String(span.end)),
                "attributes": attributes(span.attributes), "flags": .integer(Int64(flags(span))),
            ]
            if let parent = span.parentSpanID { o["parentSpanId"] = .string(SpanContext.hex(parent)) }
            if let state = span.context.traceState { o["traceState"] = .string(state) }
            if let error = span.error { o["status"] = .object(["code": .integer(2), "message": .string(error)]) }
            return .object(o)
        }
        let body: JSONValue = .object(["resourceSpans": .array([.object([
            "resource": .object(["attributes": attributes(resource.map { ($0.key, .string($0.value)) })]),
            "scopeSpans": .array([.object(["scope": .object(["name": .string(scope), "version": .string(MoonmockVersion.current)]),
                                           "spans": .array(list)])]),
        ])])])
        return body.encoded()
    }
}

extension ProtoWriter {
    mutating func message(_ number: Int, _ payload: [UInt8]) {
        tag(number, .lengthDelimited)
        lengthDelimited(payload)
    }

    mutating func string(_ number: Int, _ text: String) { message(number, Array(text.utf8)) }
}
