import Testing
@testable import MoonmockCore
@testable import MoonmockRedis

@Suite("Redis store: URLs, values and shared journal entries")
struct RedisStoreFormatTests {
    @Test("a store URL gives host, port, password, database and prefix; a wrong one says what is expected")
    func urls() throws {
        let full = try RedisURL("redis://:s3cret@10.0.0.5:6380/2?prefix=checkout")
        #expect(full.host == "10.0.0.5" && full.port == 6380 && full.password == "s3cret" && full.database == 2 && full.prefix == "checkout")
        #expect(full.display == "redis://10.0.0.5:6380/2?prefix=checkout")   // no password in messages
        let plain = try RedisURL("redis://localhost")
        #expect(plain.port == 6379 && plain.database == 0 && plain.prefix == "moonmock" && plain.password == nil)
        let acl = try RedisURL("redis://app:pw%40x@h:1/")
        #expect(acl.username == "app" && acl.password == "pw@x")
        for bad in ["http://h:1", "redis://", "redis://h:0", "redis://h:99999", "redis://h/db", "redis://h?prefx=a", "redis://h?prefix="] {
            #expect(throws: RedisURL.Invalid.self, "\(bad)") { try RedisURL(bad) }
        }
        do { _ = try RedisURL("http://h") } catch { #expect(String(describing: error).contains("expected redis://[:password@]HOST[:PORT][/DB][?prefix=NAME]")) }
    }

    @Test("state values keep their type through Redis's strings; integers stay INCRBY-able")
    func values() {
        let values: [StateValue] = [.integer(-42), .integer(0), .double(2.5), .double(-0.1), .string(""), .string("7"), .string("héllo"), .bool(true), .bool(false)]
        for v in values {
            #expect(RedisStore.decode(.string(Array(RedisStore.encode(v).utf8))) == v)
        }
        #expect(RedisStore.encode(.integer(12)) == "12")
        #expect(RedisStore.decode(.null) == nil)
    }

    @Test("a journal entry survives the shared format: request, outcome, response, near misses, replica")
    func sharedEntry() throws {
        let engine = Engine()
        engine.add(try Rule(method: "GET", pattern: "/users/:id") { _ in
            var r = MockResponse.json(.object(["id": .integer(7)]))
            r.headers.add("X-Trace", "abc")
            return r
        })
        _ = engine.handle(MockRequest(method: "GET", url: "http://api.test:8080/users/7?full=1", headers: HTTPHeaders([("Accept", "a/b")])))
        _ = engine.handle(MockRequest(method: "POST", url: "http://api.test/nothing", body: [0, 255, 10]))
        for entry in engine.journal.entries() {
            let copy = try JournalEntry(sharedJSON: Array(entry.sharedJSON(replica: "pod-2").utf8))
            #expect(copy.id == entry.id && copy.method == entry.method && copy.url == entry.url && copy.body == entry.body)
            #expect(copy.headers.fields.map(\.name) == entry.headers.fields.map(\.name))
            #expect(copy.status == entry.status && copy.ruleID == entry.ruleID && copy.timestamp == entry.timestamp)
            #expect(copy.responseBody == entry.responseBody && copy.responseHeaders["X-Trace"] == entry.responseHeaders["X-Trace"])
            #expect(copy.nearMisses.map(\.summary) == entry.nearMisses.map(\.summary))
            #expect(copy.replica == "pod-2")
        }
        #expect(throws: (any Error).self) { try JournalEntry(sharedJSON: Array("[1]".utf8)) }
        #expect(throws: (any Error).self) { try JournalEntry(sharedJSON: Array(#"{"id": 1}"#.utf8)) }
    }
}
