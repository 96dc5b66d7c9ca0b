/// One journal entry kept in a single allocation: the request's method, scheme, authority,
/// target, header fields and body as length-prefixed bytes after a header of the outcome.
///
/// A full journal replaces its oldest entry with every request, and the entry it frees is a
/// request from `capacity` requests ago, cold in every cache. Kept as a ``MockRequest`` it is
/// several blocks (its storage, its header list, its path segments, its body), each a cache
/// miss to free; kept as a record it is one. The request is rebuilt when the journal is read,
/// which is rare next to recording.
///
/// ```swift
/// var spare: JournalRecord?
/// let record = JournalRecord.make(request, reusing: &spare, sequence: 1, timestamp: 0, status: 200, ruleID: "ping",
///                                 durationMicros: 3, delayMilliseconds: 0, fault: nil, logs: [],
///                                 error: nil, nearMisses: [])
/// record.entry.request.path   // as recorded
/// ```
/// `@unchecked Sendable`: written only while one holder has it (before it is shared, or when
/// reused after every other holder let go), and only read otherwise.
struct JournalRecord: @unchecked Sendable {
    private var storage: ManagedBuffer<Head, UInt8>

    struct Head {
        let sequence: UInt64
        let id: Int
        let port: Int?
        /// The number of header fields recorded one by one, or -1: the header lines recorded whole.
        let headerCount: Int
        let timestamp: Double
        let status: Int
        let ruleID: String?
        let durationMicros: Int
        let delayMilliseconds: Double
        let fault: Fault?
        let logs: [String]
        let error: String?
        let nearMisses: [NearMiss]
        let responseHeaders: HTTPHeaders
        let responseBody: [UInt8]
        let responseLength: Int
        let contract: JSONValue?
        let chaos: ChaosKind?
    }

    /// Copies `r` (its body cut to ``Journal/maxBodyBytes``) and what came of it, into the block
    /// of `spare` (left `nil`) when nothing else holds it and it is big enough but not far too
    /// big: a full journal frees no record and allocates none.
    static func make(_ r: MockRequest, reusing spare: inout JournalRecord?, sequence: UInt64, timestamp: Double, status: Int, ruleID: String?, durationMicros: Int,
                     delayMilliseconds: Double, fault: Fault?, logs: [String], error: String?, nearMisses: [NearMiss],
                     response: (headers: HTTPHeaders, body: [UInt8], length: Int) = (HTTPHeaders(), [], 0),
                     contract: JSONValue? = nil, chaos: ChaosKind? = nil) -> JournalRecord {
        // A server's header lines are copied as they are (one piece); other lists field by field.
        let headers = r.headers
        let lines = headers.validatedLines
        let fields = lines == nil ? headers.fields : []
        let body = r.body.count > Journal.maxBodyBytes ? r.body[..<Journal.maxBodyBytes] : r.body[...]
        // A 32-bit length before each of: method, scheme, host, target, every name and value (or
        // the lines), body.
        var size = 4 * (5 + (lines == nil ? 2 * fields.count : 1)) + body.count + (lines?.count ?? 0)
        size += r.method.utf8.count + r.scheme.utf8.count + r.host.utf8.count + r.path.utf8.count
        if let q = r.rawQuery { size += 1 + q.utf8.count }
        // Read in place: iterating would copy (retain and release) every name and value.
        fields.withUnsafeBufferPointer { f in
            for i in f.indices { size += f[i].name.utf8.count + f[i].value.utf8.count }
        }
        // Built where it is stored: a `Head` in a local would be copied in (a retain per field).
        func head() -> Head {
            Head(sequence: sequence, id: r.id, port: r.port, headerCount: lines == nil ? fields.count : -1, timestamp: timestamp,
                 status: status, ruleID: ruleID, durationMicros: durationMicros, delayMilliseconds: delayMilliseconds,
                 fault: fault, logs: logs, error: error, nearMisses: nearMisses,
                 responseHeaders: response.headers, responseBody: response.body, responseLength: response.length, contract: contract, chaos: chaos)
        }
        let storage: ManagedBuffer<Head, UInt8>
        if var old = spare.take(), isKnownUniquelyReferenced(&old.storage), case let room = old.storage.capacity,
           room >= size && room - size <= max(size, 1024) {
            old.storage.header = head()
            storage = old.storage
        } else {
            storage = ManagedBuffer<Head, UInt8>.create(minimumCapacity: size) { _ in head() }
        }
        storage.withUnsafeMutablePointerToElements { start in
            var writer = Writer(at: UnsafeMutableRawPointer(start))
            writer.put(r.method)
            writer.put(r.scheme)
            writer.put(r.host)
            if let q = r.rawQuery { writer.put(r.path, "?", q) } else { writer.put(r.path) }
            if let lines {
                lines.withUnsafeBytes { writer.put($0) }
            } else {
                fields.withUnsafeBufferPointer { f in
                    for i in f.indices {
                        writer.put(f[i].name)
                        writer.put(f[i].value)
                    }
                }
            }
            body.withUnsafeBufferPointer { writer.put(UnsafeRawBufferPointer($0)) }
            assert(writer.p == UnsafeMutableRawPointer(start) + size, "journal record size miscounted")
        }
        return JournalRecord(storage: storage)
    }

    var sequence: UInt64 { storage.header.sequence }

    /// The entry as recorded, its request rebuilt.
    var entry: JournalEntry {
        let h = storage.header
        let request: MockRequest = storage.withUnsafeMutablePointerToElements { start in
            var reader = Reader(at: UnsafeRawPointer(start))
            let method = reader.string(), scheme = reader.string(), host = reader.string(), target = reader.string()
            let headers: HTTPHeaders
            if h.headerCount < 0 {
                headers = HTTPHeaders(validatedLines: reader.bytes())
            } else {
                var fields: [(String, String)] = []
                fields.reserveCapacity(h.headerCount)
                for _ in 0..<h.headerCount { fields.append((reader.string(), reader.string())) }
                headers = HTTPHeaders(fields)
            }
            let body = reader.bytes()
            var request = MockRequest(method: method, scheme: scheme, authority: h.port.map { host + ":\($0)" } ?? host,
                                      target: target, headers: headers, body: body)
            request.id = h.id
            return request
        }
        var entry = JournalEntry(request: request, timestamp: h.timestamp, status: h.status, ruleID: h.ruleID,
                                 durationMicros: h.durationMicros, delayMilliseconds: h.delayMilliseconds, fault: h.fault,
                                 logs: h.logs, error: h.error, nearMisses: h.nearMisses)
        entry.sequence = h.sequence
        entry.responseHeaders = h.responseHeaders
        entry.responseBody = h.responseBody
        entry.responseBodyLength = h.responseLength
        entry.contract = h.contract
        entry.chaos = h.chaos?.name
        return entry
    }

    /// Appends length-prefixed byte strings (a 32-bit length, then the bytes).
    private struct Writer {
        var p: UnsafeMutableRawPointer

        init(at p: UnsafeMutableRawPointer) { self.p = p }

        mutating func put(_ bytes: UnsafeRawBufferPointer) {
            p.storeBytes(of: UInt32(bytes.count), as: UInt32.self)
            if let base = bytes.baseAddress, !bytes.isEmpty { (p + 4).copyMemory(from: base, byteCount: bytes.count) }
            p += 4 + bytes.count
        }

        mutating func put(_ text: String) {
            text.withUTF8Bytes { put(UnsafeRawBufferPointer($0)) }
        }

        /// Three strings as one: the path, `?` and the query.
        mutating func put(_ a: String, _ b: String, _ c: String) {
            let start = p
            p += 4
            raw(a)
            raw(b)
            raw(c)
            start.storeBytes(of: UInt32(p - start - 4), as: UInt32.self)
        }

        private mutating func raw(_ text: String) {
            text.withUTF8Bytes { u in
                if let base = u.baseAddress, !u.isEmpty { p.copyMemory(from: base, byteCount: u.count) }
                p += u.count
            }
        }
    }

    private struct Reader {
        var p: UnsafeRawPointer

        init(at p: UnsafeRawPointer) { self.p = p }

        private mutating func next() -> UnsafeRawBufferPointer {
            let count = Int(p.loadUnaligned(as: UInt32.self))
            defer { p += 4 + count }
            return UnsafeRawBufferPointer(start: p + 4, count: count)
        }

        mutating func string() -> String { String(decoding: next(), as: UTF8.self) }
        mutating func bytes() -> [UInt8] { [UInt8](next()) }
    }
}
