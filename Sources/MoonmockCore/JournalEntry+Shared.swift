import Foundation

/// A journal entry as replicas share it (a Redis Stream's field): compact JSON that rebuilds the
/// same entry on another replica — request, outcome, response head and body, logs, near misses.
///
/// ```swift
/// let text = entry.sharedJSON(replica: "pod-1")
/// let copy = try JournalEntry(sharedJSON: Array(text.utf8))   // copy.replica == "pod-1"
/// ```
extension JournalEntry {
    /// A shared entry that does not parse.
    public struct SharedFormatError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Written straight into bytes (no document built, no keys sorted): a replica's writer thread
    /// encodes every request it serves.
    public func sharedJSON(replica: String) -> String {
        let r = request
        var out: [UInt8] = []
        out.reserveCapacity(256 + r.body.count * 4 / 3 + responseBody.count * 4 / 3)
        func key(_ k: StaticString) {
            out.append(out.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount))
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func string(_ k: StaticString, _ v: String) { key(k); JSONValue.encodeString(v, into: &out) }
        func number(_ k: StaticString, _ v: Int) { key(k); out.append(contentsOf: String(v).utf8) }
        func bytes(_ k: StaticString, _ v: [UInt8]) { if !v.isEmpty { string(k, Data(v).base64EncodedString()) } }
        func strings(_ list: [String]) {
            out.append(UInt8(ascii: "["))
            for (i, s) in list.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(s, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        func pairs(_ k: StaticString, _ headers: HTTPHeaders) {
            key(k)
            out.append(UInt8(ascii: "["))
            for (i, f) in headers.fields.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                strings([f.name, f.value])
            }
            out.append(UInt8(ascii: "]"))
        }
        number("id", id)
        key("ts"); JSONValue.double(timestamp).encode(into: &out)
        string("m", r.method)
        string("sc", r.scheme)
        string("h", r.host)
        if let port = r.port { number("p", port) }
        string("t", r.path + (r.rawQuery.map { "?" + $0 } ?? ""))
        pairs("hd", r.headers)
        bytes("b", r.body)
        number("st", status)
        number("us", durationMicros)
        key("d"); JSONValue.double(delayMilliseconds).encode(into: &out)
        string("rep", replica)
        pairs("rh", responseHeaders)
        number("rl", responseBodyLength)
        bytes("rb", responseBody)
        if let ruleID { string("r", ruleID) }
        if !logs.isEmpty { key("lg"); strings(logs) }
        if let error { string("e", error) }
        if let contract { key("ct"); contract.encode(into: &out) }
        if let chaos { key("cx"); JSONValue.string(chaos).encode(into: &out) }
        switch fault {
        case .dribble(let n)?: string("f", "dribble"); number("fb", n)
        case let f? where Fault(name: f.description) != nil: string("f", f.description)
        default: break
        }
        if !nearMisses.isEmpty {
            key("nm")
            out.append(UInt8(ascii: "["))
            for (i, n) in nearMisses.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "["))
                JSONValue.encodeString(n.ruleID, into: &out)
                out.append(UInt8(ascii: ","))
                if let location = n.location { JSONValue.encodeString(location, into: &out) } else { out.append(contentsOf: "null".utf8) }
                out.append(UInt8(ascii: ","))
                strings(n.mismatches)
                out.append(UInt8(ascii: ","))
                strings(n.passed)
                out.append(UInt8(ascii: "]"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    public init(sharedJSON text: [UInt8]) throws {
        guard case .object(let o) = try JSONValue(parsing: text) else { throw SharedFormatError(description: "a shared journal entry is not a JSON object") }
        func string(_ k: String) -> String? { o[k]?.stringValue }
        func int(_ k: String) -> Int? {
            // Written by another replica, or by anyone with the Redis: a number out of range is no number.
            switch o[k] { case .integer(let i)?: return Int(i); case .double(let d)?: return Int(exactly: d.rounded(.towardZero)); default: return nil }
        }
        func double(_ k: String) -> Double {
            switch o[k] { case .integer(let i)?: return Double(i); case .double(let d)?: return d; default: return 0 }
        }
        func bytes(_ k: String) -> [UInt8] { string(k).flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? [] }
        func strings(_ v: JSONValue?) -> [String] {
            if case .array(let a)? = v { return a.compactMap(\.stringValue) }
            return []
        }
        func headers(_ k: String) -> HTTPHeaders {
            guard case .array(let a)? = o[k] else { return HTTPHeaders() }
            return HTTPHeaders(a.compactMap { pair -> (String, String)? in
                guard let name = pair[0]?.stringValue, let value = pair[1]?.stringValue else { return nil }
                return (name, value)
            })
        }
        guard let id = int("id"), let method = string("m"), let host = string("h"), let target = string("t") else {
            throw SharedFormatError(description: "a shared journal entry lacks id, method, host or target")
        }
        var request = MockRequest(method: method, scheme: string("sc") ?? "http", host: host, port: int("p").flatMap { (0...65535).contains($0) ? $0 : nil }, target: target,
                                  headers: headers("hd"), body: bytes("b"))
        request.id = id
        var misses: [NearMiss] = []
        if case .array(let list)? = o["nm"] {
            for n in list {
                guard let rule = n[0]?.stringValue else { continue }
                misses.append(NearMiss(ruleID: rule, location: n[1]?.stringValue, mismatches: strings(n[2]), passed: strings(n[3]), distance: 0))
            }
        }
        self.init(request: request, timestamp: double("ts"), status: int("st") ?? 0, ruleID: string("r"),
                  durationMicros: int("us") ?? 0, delayMilliseconds: double("d"),
                  fault: string("f").flatMap { Fault(name: $0, bytesPerSecond: int("fb")) },
                  logs: strings(o["lg"]), error: string("e"), nearMisses: misses)
        responseHeaders = headers("rh")
        contract = o["ct"]
        chaos = o["cx"]?.stringValue
        responseBody = bytes("rb")
        responseBodyLength = int("rl") ?? responseBody.count
        replica = string("rep")
    }
}
