import MoonmockCore

/// `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?prefix=NAME]`, as `moonmock serve --store` takes it.
///
/// ```swift
/// let url = try RedisURL("redis://:s3cret@10.0.0.5:6380/2?prefix=checkout")
/// url.port     // 6380
/// url.prefix   // "checkout"
/// ```
public struct RedisURL: Sendable, Equatable {
    public let host: String
    public let port: Int
    public let password: String?
    /// A Redis 6 ACL user (`redis://USER:PASSWORD@…`); `nil`: the default user.
    public let username: String?
    public let database: Int
    /// Every key and channel starts with `PREFIX:` (default `moonmock`): environments share a Redis apart.
    public let prefix: String

    /// A store URL that does not parse.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ text: String) throws {
        let usage = "expected redis://[:password@]HOST[:PORT][/DB][?prefix=NAME], got '\(text)'"
        guard text.hasPrefix("redis://") else { throw Invalid(description: usage) }
        var rest = Substring(text.dropFirst("redis://".count))
        var prefix = "moonmock"
        if let q = rest.firstIndex(of: "?") {
            for item in rest[rest.index(after: q)...].split(separator: "&") {
                let kv = item.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, kv[0] == "prefix", !kv[1].isEmpty else { throw Invalid(description: "unknown or empty query item '\(item)': \(usage)") }
                prefix = PercentDecoding.decode(kv[1])
            }
            rest = rest[..<q]
        }
        var password: String?, username: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            if let colon = info.firstIndex(of: ":") {
                if colon != info.startIndex { username = PercentDecoding.decode(info[..<colon]) }
                password = PercentDecoding.decode(info[info.index(after: colon)...])
            } else {
                password = PercentDecoding.decode(info)
            }
            rest = rest[rest.index(after: at)...]
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let n = Int(db), n >= 0 else { throw Invalid(description: "database '\(db)' is not a number: \(usage)") }
                database = n
            }
            rest = rest[..<slash]
        }
        var port = 6379
        if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { throw Invalid(description: "bad port: \(usage)") }
            port = p
            rest = rest[..<colon]
        }
        guard !rest.isEmpty else { throw Invalid(description: "no host: \(usage)") }
        host = String(rest)
        self.port = port
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
        self.username = username
        self.database = database
        self.prefix = prefix
    }

    /// The URL without its password, for messages and `health`.
    public var display: String { "redis://\(host):\(port)/\(database)" + (prefix == "moonmock" ? "" : "?prefix=\(prefix)") }
}
