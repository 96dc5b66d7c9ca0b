import MoonmockCore

/// `mock.state` on Redis: one key per state key, values keeping their Lua type — integers as
/// plain digits (so INCRBY counts them), `d` + a double, `s` + a string, `t` / `f` booleans.
extension RedisStore {
    static func encode(_ v: StateValue) -> String {
        switch v {
        case .integer(let i): return String(i)
        case .double(let d): return "d" + String(d)
        case .string(let s): return "s" + s
        case .bool(let b): return b ? "t" : "f"
        }
    }

    static func decode(_ reply: RedisReply) -> StateValue? {
        guard case .string(let bytes) = reply, let first = bytes.first else { return nil }
        let rest = String(decoding: bytes.dropFirst(), as: UTF8.self)
        switch first {
        case UInt8(ascii: "s"): return .string(rest)
        case UInt8(ascii: "d"): return Double(rest).map(StateValue.double)
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        default: return Int64(String(decoding: bytes, as: UTF8.self)).map(StateValue.integer)
        }
    }

    static func expiry(_ ttl: Double?) -> [String] {
        guard let ttl else { return [] }
        return ["PX", String(max(1, Int((ttl * 1000).rounded())))]
    }

    public func stateGet(_ key: String) throws -> StateValue? {
        Self.decode(try pool.run(["GET", self.key("s", key)]))
    }

    public func stateSet(_ key: String, _ value: StateValue?, ttl: Double?) throws {
        let k = self.key("s", key)
        _ = try pool.run(value.map { ["SET", k, Self.encode($0)] + Self.expiry(ttl) } ?? ["DEL", k])
    }

    public func stateAdd(_ key: String, _ value: StateValue, ttl: Double?) throws -> Bool {
        let reply = try pool.run(["SET", self.key("s", key), Self.encode(value), "NX"] + Self.expiry(ttl))
        return reply != .null
    }

    /// Integers: `SET NX` of the initial value and `INCRBY`, pipelined. Anything with a double:
    /// one Lua script on the server (still one atomic step).
    public func stateIncr(_ key: String, by: StateValue, initial: StateValue) throws -> StateValue {
        let k = self.key("s", key)
        if case .integer(let step) = by, case .integer(let start) = initial {
            let replies = try pool.run([["SET", k, String(start), "NX"], ["INCRBY", k, String(step)]])
            if case .integer(let n) = replies[1] { return .integer(n) }
        }
        guard let step = Self.number(by), let start = Self.number(initial) else { throw StateStore.NotANumber(key: key) }
        let script = """
        local v = redis.call('GET', KEYS[1]) or ARGV[2]
        local n
        if string.sub(v, 1, 1) == 'd' then n = tonumber(string.sub(v, 2)) else n = tonumber(v) end
        if n == nil or string.match(v, '^[stf]') then return redis.error_reply('NAN') end
        local out = 'd' .. string.format('%.17g', n + tonumber(ARGV[1]))
        redis.call('SET', KEYS[1], out, 'KEEPTTL')
        return out
        """
        let reply = try pool.run(["EVAL", script, "1", k, String(step), "d" + String(start)])
        guard let value = Self.decode(reply) else { throw StateStore.NotANumber(key: key) }
        return value
    }

    private static func number(_ v: StateValue) -> Double? {
        switch v {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public func stateDelete(_ key: String) throws -> Bool {
        try pool.run(["DEL", self.key("s", key)]) == .integer(1)
    }

    public func stateSnapshot() throws -> [String: StateValue] {
        let keys = try scan(key("s", "*"))
        let strip = key("s", "").count
        var out: [String: StateValue] = [:]
        for chunk in stride(from: 0, to: keys.count, by: 500) {
            let part = Array(keys[chunk..<min(chunk + 500, keys.count)])
            guard case .array(let values) = try pool.with({ try $0.command(["MGET"] + part) }) else { continue }
            for (k, v) in zip(part, values) { if let value = Self.decode(v) { out[String(k.dropFirst(strip))] = value } }
        }
        return out
    }

    public func stateFlush() throws {
        let keys = try scan(key("s", "*"))
        for chunk in stride(from: 0, to: keys.count, by: 500) {
            _ = try pool.with { try $0.command(["UNLINK"] + keys[chunk..<min(chunk + 500, keys.count)]) }
        }
    }
}
