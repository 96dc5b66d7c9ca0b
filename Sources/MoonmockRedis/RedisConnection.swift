import CHiredis
import MoonmockCore

/// A reply from Redis, copied out of hiredis's reply object.
enum RedisReply: Equatable {
    case string([UInt8])
    case integer(Int64)
    case array([RedisReply])
    case status(String)
    case error(String)
    case null

    var text: String? {
        switch self {
        case .string(let b): return String(decoding: b, as: UTF8.self)
        case .status(let s): return s
        default: return nil
        }
    }
}

/// The connection could not be made, broke, or timed out: the store is away.
struct RedisConnectionError: Error, CustomStringConvertible {
    let description: String
}

/// One blocking hiredis connection (`redisContext`), used by one thread at a time (the pool
/// hands it out). The unsafe part of MoonmockRedis: the context pointer, argv buffers, and
/// hiredis reply objects, each freed here. Every read and write is bounded by the timeout
/// given at connect (`--store-timeout`); after any connection error the context is dropped,
/// as hiredis requires. `@unchecked Sendable`: it moves between threads only through the
/// pool's lock, and one thread uses it at a time.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>

    /// Connects, signs in with `password` and selects `database`.
    init(_ url: RedisURL, timeoutMilliseconds: Int) throws {
        guard let c = mm_redis_connect(url.host, Int32(url.port), Int32(max(1, timeoutMilliseconds))) else {
            throw RedisConnectionError(description: "\(url.display): cannot allocate a connection")
        }
        if c.pointee.err != 0 {
            let reason = String(cString: mm_redis_errstr(c))
            redisFree(c)
            throw RedisConnectionError(description: "\(url.display): \(reason)")
        }
        context = c
        redisEnableKeepAlive(c)
        if let password = url.password, case .error(let e) = try command(["AUTH"] + (url.username.map { [$0] } ?? []) + [password]) {
            throw RedisConnectionError(description: "\(url.display): AUTH refused: \(e)")
        }
        if url.database != 0, case .error(let e) = try command(["SELECT", String(url.database)]) {
            throw RedisConnectionError(description: "\(url.display): SELECT \(url.database) refused: \(e)")
        }
    }

    deinit { redisFree(context) }

    /// Reads wait for as long as it takes (a subscriber's connection).
    func setNoTimeout() throws {
        if redisSetTimeout(context, mm_redis_timeval(0)) != REDIS_OK { throw failure() }
    }

    /// Sends one command and reads its reply (an error reply is a value, not a throw).
    func command(_ args: [String]) throws -> RedisReply {
        let raw = Self.withArgv(args) { argc, argv, lengths in redisCommandArgv(context, argc, argv, lengths) }
        return try take(raw)
    }

    /// Sends `commands` in one write and reads their replies in order (one round trip).
    func pipeline(_ commands: [[String]]) throws -> [RedisReply] {
        for args in commands {
            let status = Self.withArgv(args) { argc, argv, lengths in redisAppendCommandArgv(context, argc, argv, lengths) }
            if status != REDIS_OK { throw failure() }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try read()) }
        return replies
    }

    // MARK: non-blocking use (an event loop's channel)

    /// From now on reads and writes return at once; the descriptor to watch.
    func makeNonBlocking() -> Int32 { mm_redis_make_nonblocking(context) }

    /// Queues a command in the output buffer (nothing is written yet), encoded here in RESP
    /// into a buffer kept from command to command (no argv arrays, no format parsing).
    func append(_ args: [String]) throws {
        resp.removeAll(keepingCapacity: true)
        Self.put(UInt8(ascii: "*"), args.count, into: &resp)
        for arg in args {
            var arg = arg
            arg.withUTF8 { bytes in
                Self.put(UInt8(ascii: "$"), bytes.count, into: &resp)
                resp.append(contentsOf: bytes)
                resp.append(13); resp.append(10)
            }
        }
        let status = resp.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { redisAppendFormattedCommand(context, $0.baseAddress, $0.count) }
        }
        if status != REDIS_OK { throw failure() }
    }

    private var resp: [UInt8] = []

    /// `*N\r\n` or `$N\r\n`.
    private static func put(_ kind: UInt8, _ n: Int, into out: inout [UInt8]) {
        out.append(kind)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = n
        withUnsafeMutableBytes(of: &digits) { d in
            repeat { d[count] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10; count += 1 } while v > 0
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(d[i]) }
        }
        out.append(13); out.append(10)
    }

    /// Whether queued bytes wait to be written.
    var hasOutput: Bool { mm_redis_has_output(context) != 0 }

    /// Writes what the socket takes now; `true` when all of it went.
    func writeSome() throws -> Bool {
        var done: Int32 = 0
        if redisBufferWrite(context, &done) != REDIS_OK { throw failure() }
        return done != 0
    }

    /// Reads what arrived and returns the whole replies in it (none when nothing came yet).
    func readAvailable() throws -> [RedisReply] {
        if redisBufferRead(context) != REDIS_OK { throw failure() }
        var replies: [RedisReply] = []
        while true {
            var raw: UnsafeMutableRawPointer?
            if redisGetReplyFromReader(context, &raw) != REDIS_OK { throw failure() }
            guard let raw else { return replies }
            replies.append(Self.copy(raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
    }

    /// Reads the next reply (a subscriber's message), waiting at most the timeout.
    func read() throws -> RedisReply {
        var raw: UnsafeMutableRawPointer?
        if redisGetReply(context, &raw) != REDIS_OK { throw failure() }
        return try take(raw)
    }

    private func take(_ raw: UnsafeMutableRawPointer?) throws -> RedisReply {
        guard let raw else { throw failure() }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    private func failure() -> RedisConnectionError {
        let reason = context.pointee.err != 0 ? String(cString: mm_redis_errstr(context)) : "no reply"
        return RedisConnectionError(description: reason.isEmpty || reason == "Resource temporarily unavailable" ? "no answer within the store timeout" : reason)
    }

    private static func copy(_ r: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let reply = r.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            return .string(reply.len == 0 ? [] : Array(UnsafeRawBufferPointer(start: reply.str, count: reply.len)))
        case REDIS_REPLY_INTEGER: return .integer(Int64(reply.integer))
        case REDIS_REPLY_STATUS: return .status(reply.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR: return .error(reply.str.map { String(cString: $0) } ?? "error")
        case REDIS_REPLY_ARRAY:
            return .array((0..<reply.elements).map { copy(mm_redis_element(r, $0)) })
        default: return .null
        }
    }

    /// The arguments as hiredis's argv: one buffer of their bytes, pointers into it, lengths
    /// (binary-safe: no terminator is read).
    private static func withArgv<T>(_ args: [String], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T) -> T {
        let bytes = args.map { Array($0.utf8) }
        let lengths = bytes.map(\.count)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, lengths.reduce(0, +)))
        defer { buffer.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(args.count)
        var offset = 0
        for b in bytes {
            b.withUnsafeBytes { src in
                if let base = src.baseAddress { UnsafeMutableRawPointer(buffer + offset).copyMemory(from: base, byteCount: src.count) }
            }
            pointers.append(UnsafePointer(buffer + offset))
            offset += b.count
        }
        return pointers.withUnsafeMutableBufferPointer { p in
            lengths.withUnsafeBufferPointer { l in body(Int32(args.count), p.baseAddress!, l.baseAddress!) }
        }
    }
}
