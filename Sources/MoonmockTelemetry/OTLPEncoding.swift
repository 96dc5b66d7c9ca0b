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

    /// The request for `spans`. Every length is computed before its message is written, so the
    /// bytes go once into one buffer sized in advance (no nested buffers copied into their parent).
    public static func protobuf(_ spans: [SpanRecord], resource: [(key: String, value: String)]) -> [UInt8] {
        var resourceSize = 0
        for (k, v) in resource { resourceSize += field(keyValueSize(k, .string(v))) }
        let scopeSize = field(scope.utf8.count) + field(MoonmockVersion.current.utf8.count)
        let sizes = spans.map(spanSize)
        let scopeSpansSize = field(scopeSize) + sizes.reduce(0) { $0 + field($1) }
        let resourceSpansSize = field(resourceSize) + field(scopeSpansSize)
        let total = field(resourceSpansSize)
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var w = Output(base: buffer.baseAddress!)
            w.header(1, resourceSpansSize)                 // ExportTraceServiceRequest.resource_spans
            w.header(1, resourceSize)                      // ResourceSpans.resource
            for (k, v) in resource { w.keyValue(1, k, .string(v)) }
            w.header(2, scopeSpansSize)                    // ResourceSpans.scope_spans
            w.header(1, scopeSize)                         // ScopeSpans.scope
            w.string(1, scope)
            w.string(2, MoonmockVersion.current)
            for (span, size) in zip(spans, sizes) {
                w.header(2, size)                          // ScopeSpans.spans
                w.span(span)
            }
            precondition(w.offset == total, "OTLP span sizes computed wrong")
            count = total
        }
    }

    /// A length-delimited field's size: its tag (one byte: every field number here is below 16),
    /// its length and the payload.
    static func field(_ payload: Int) -> Int { 1 + varintSize(UInt64(payload)) + payload }

    static func varintSize(_ v: UInt64) -> Int { v == 0 ? 1 : (64 - v.leadingZeroBitCount + 6) / 7 }

    static func anyValueSize(_ value: SpanValue) -> Int {
        switch value {
        case .string(let s): return field(s.utf8.count)
        case .bool: return 2
        case .int(let n): return 1 + varintSize(UInt64(bitPattern: n))
        case .double: return 9
        }
    }

    static func keyValueSize(_ key: String, _ value: SpanValue) -> Int { field(key.utf8.count) + field(anyValueSize(value)) }

    static func statusSize(_ error: String) -> Int { (error.isEmpty ? 0 : field(error.utf8.count)) + 2 }

    static func spanSize(_ span: SpanRecord) -> Int {
        var n = 18 + 10 + field(span.name.utf8.count) + 2 + 9 + 9 + 6   // ids, name, kind, times, flags (tag 16: two bytes)
        if let state = span.context.traceState { n += field(state.utf8.count) }
        if span.parentSpanID != nil { n += 10 }
        for a in span.attributes { n += field(keyValueSize(a.key, a.value)) }
        if let error = span.error { n += field(statusSize(error)) }
        return n
    }

    /// The W3C flags (sampled) and OTLP's bits saying whether the parent is remote.
    static func flags(_ span: SpanRecord) -> UInt32 {
        (span.context.sampled ? 1 : 0) | 0x100 | (span.parentIsRemote ? 0x200 : 0)
    }

    /// Bytes written front to back into memory sized exactly beforehand.
    struct Output {
        let base: UnsafeMutablePointer<UInt8>
        var offset = 0
        init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func byte(_ b: UInt8) {
            base[offset] = b
            offset += 1
        }

        mutating func raw(_ bytes: UnsafeRawBufferPointer) {
            guard let from = bytes.baseAddress, !bytes.isEmpty else { return }
            (base + offset).update(from: from.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            offset += bytes.count
        }

        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                byte(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            byte(UInt8(v))
        }

        mutating func tag(_ number: Int, _ type: WireType) { varint(UInt64(number) << 3 | UInt64(type.rawValue)) }

        mutating func header(_ number: Int, _ length: Int) {
            tag(number, .lengthDelimited)
            varint(UInt64(length))
        }

        mutating func string(_ number: Int, _ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                header(number, utf8.count)
                raw(UnsafeRawBufferPointer(utf8))
            }
        }

        mutating func fixed64(_ number: Int, _ value: UInt64) {
            tag(number, .fixed64)
            withUnsafeBytes(of: value.littleEndian) { raw($0) }
        }

        mutating func id(_ number: Int, _ values: UInt64...) {
            header(number, values.count * 8)
            for v in values { withUnsafeBytes(of: v.bigEndian) { raw($0) } }
        }

        mutating func keyValue(_ number: Int, _ key: String, _ value: SpanValue) {
            header(number, OTLPEncoding.keyValueSize(key, value))
            string(1, key)
            header(2, OTLPEncoding.anyValueSize(value))
            switch value {
            case .string(let s): string(1, s)
            case .bool(let b): tag(2, .varint); varint(b ? 1 : 0)
            case .int(let n): tag(3, .varint); varint(UInt64(bitPattern: n))
            case .double(let d): fixed64(4, d.bitPattern)
            }
        }

        mutating func span(_ span: SpanRecord) {
            id(1, span.context.traceHigh, span.context.traceLow)
            id(2, span.context.spanID)
            if let state = span.context.traceState { string(3, state) }
            if let parent = span.parentSpanID { id(4, parent) }
            string(5, span.name)
            tag(6, .varint)
            varint(UInt64(span.kind.rawValue))
            fixed64(7, span.start)
            fixed64(8, span.end)
            for a in span.attributes { keyValue(9, a.key, a.value) }
            if let error = span.error {
                header(15, OTLPEncoding.statusSize(error))
                if !error.isEmpty { string(2, error) }
                tag(3, .varint)
                varint(2)   // STATUS_CODE_ERROR
            }
            tag(16, .fixed32)
            withUnsafeBytes(of: OTLPEncoding.flags(span).littleEndian) { raw($0) }
        }
    }

    // MARK: JSON

    public static func json(_ spans: [SpanRecord], resource: [(key: String, value: String)]) -> [UInt8] {
        func attributes(_ list: [SpanAttribute]) -> JSONValue {
            .array(list.map { attribute in
                let value: JSONValue
                switch attribute.value {
                case .string(let s): value = .object(["stringValue": .string(s)])
                case .bool(let b): value = .object(["boolValue": .bool(b)])
                case .int(let n): value = .object(["intValue": .string(String(n))])
                case .double(let d): value = .object(["doubleValue": .double(d)])
                }
                return .object(["key": .string(attribute.key), "value": value])
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
            "resource": .object(["attributes": attributes(resource.map { SpanAttribute($0.key, .string($0.value)) })]),
            "scopeSpans": .array([.object(["scope": .object(["name": .string(scope), "version": .string(MoonmockVersion.current)]),
                                           "spans": .array(list)])]),
        ])])])
        return body.encoded()
    }
}
