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

    public func sharedJSON(replica: String) -> String {
        let r = request
        var o: [String: JSONValue] = [
            "id": .integer(Int64(id)), "ts": .double(timestamp), "m": .string(r.method), "sc": .string(r.scheme),
            "h": .string(r.host), "t": .string(r.path + (r.rawQuery.map { "?" + $0 } ?? "")),
            "hd": Self.pairs(r.headers), "st": .integer(Int64(status)), "us": .integer(Int64(durationMicros)),
            "d": .double(delayMilliseconds), "rep": .string(replica),
            "rh": Self.pairs(responseHeaders), "rl": .integer(Int64(responseBodyLength)),
        ]
        if let port = r.port { o["p"] = .integer(Int64(port)) }
        if !r.body.isEmpty { o["b"] = .string(Data(r.body).base64EncodedString()) }
        if !responseBody.isEmpty { o["rb"] = .string(Data(responseBody).base64EncodedString()) }
        if let ruleID { o["r"] = .string(ruleID) }
        if !logs.isEmpty { o["lg"] = .array(logs.map(JSONValue.string)) }
        if let error { o["e"] = .string(error) }
        switch fault {
        case .dribble(let n)?: o["f"] = .string("dribble"); o["fb"] = .integer(Int64(n))
        case let f? where Fault(name: f.description) != nil: o["f"] = .string(f.description)
        default: break
        }
        if !nearMisses.isEmpty {
            o["nm"] = .array(nearMisses.map { n in
                .array([.string(n.ruleID), n.location.map(JSONValue.string) ?? .null,
                        .array(n.mismatches.map(JSONValue.string)), .array(n.passed.map(JSONValue.string))])
            })
        }
        return String(decoding: JSONValue.object(o).encoded(), as: UTF8.self)
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
        responseBody = bytes("rb")
        responseBodyLength = int("rl") ?? responseBody.count
        replica = string("rep")
    }

    private static func pairs(_ headers: HTTPHeaders) -> JSONValue {
        .array(headers.fields.map { .array([.string($0.name), .string($0.value)]) })
    }
}
