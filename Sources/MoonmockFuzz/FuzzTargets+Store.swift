import MoonmockCore
@testable import MoonmockRedis

/// What `--store` parses of its own: store URLs, values read back from Redis, and shared journal
/// entries written by another replica (a Redis anyone can write to is input like any other).
extension FuzzTargets {
    /// The first byte picks the parser. A URL that parses shows without its password and parses
    /// again to the same place; a value or an entry that decodes encodes to itself.
    static func store(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let rest = Array(input.dropFirst())
        switch first % 3 {
        case 0:
            guard let url = try? RedisURL(String(decoding: rest, as: UTF8.self)) else { return }
            // No user information at all in the form messages and `health` show.
            precondition(!url.display.contains("@") || url.prefix.contains("@"), "the display form shows the password")
            if !url.prefix.contains(where: { "?&=%/@:".contains($0) }) && !url.host.contains(where: { "?&=%/@".contains($0) }) {
                guard let again = try? RedisURL(url.display) else { preconditionFailure("display form does not parse: \(url.display)") }
                precondition(again.host == url.host && again.port == url.port && again.database == url.database && again.prefix == url.prefix)
            }
        case 1:
            guard let value = RedisStore.decode(.string(rest)) else { return }
            precondition(RedisStore.decode(.string(Array(RedisStore.encode(value).utf8))) == value, "a state value changed through Redis")
        default:
            guard let entry = try? JournalEntry(sharedJSON: rest) else { return }
            let text = entry.sharedJSON(replica: entry.replica ?? "")
            guard let again = try? JournalEntry(sharedJSON: Array(text.utf8)) else { preconditionFailure("a shared entry does not read back: \(text)") }
            precondition(again.sharedJSON(replica: again.replica ?? "") == text, "a shared entry changed on the way through")
        }
    }
}
