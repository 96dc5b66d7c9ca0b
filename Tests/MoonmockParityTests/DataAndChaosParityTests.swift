import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

/// Fake data, CRUD resources and chaos through both doors: what a test sees is the same
/// in-process and over the socket, from run to run under one seed.
@Suite("Fake data, resources and chaos through both doors")
struct DataAndChaosParityTests {
    static let dataScript = #"""
    mock.get("/users/:id", function(req)
      local f = mock.fake.seeded("user:" .. req.params.id)
      return { id = tonumber(req.params.id), name = f.name(), email = f.email(), city = f:city(), iban = f.iban(),
               card = f.credit_card{ brand = "mastercard" }, joined = f.date{ from = "2020-01-01", to = "2024-12-31" },
               de = f.name{ locale = "de" }, ja = f.phone{ locale = "ja" } }
    end)
    mock.get("/random", function() return { n = mock.fake.int{ min = 1, max = 1000000 }, w = mock.fake.words{ n = 4 }, u = mock.fake.uuid() } end)
    mock.get("/card", mock.template('{"name": "{{fake.name}}", "n": {{fake.int min=1 max=9}}, "city": "{{fake.city locale=fr}}"}'))
    mock.get("/order/:id", function(req)
      return mock.schema({ type = "object", required = { "id", "email", "total", "items", "status", "placed_at" },
        properties = { id = { type = "string", format = "uuid" }, email = { type = "string", format = "email" },
                       total = { type = "number", minimum = 1, maximum = 500 }, status = { enum = { "new", "paid", "shipped" } },
                       placed_at = { type = "string", format = "date-time" },
                       items = { type = "array", minItems = 2, maxItems = 2, items = { ["$ref"] = "#/$defs/Item" } } },
        ["$defs"] = { Item = { type = "object", required = { "sku", "qty" },
                               properties = { sku = { type = "string", pattern = "^[A-Z]{3}-[0-9]{4}$" }, qty = { type = "integer", minimum = 1, maximum = 5 } } } } },
        { seed_key = req.params.id })
    end)
    mock.resource("/pets", { seed = { count = 30, item = function(i) return { name = mock.fake.first_name(), status = i % 3 == 0 and "sold" or "available" } end } })
    """#

    static let paths = ["/users/7", "/users/8", "/users/7", "/random", "/random", "/card", "/order/a1", "/order/b2", "/pets?page=2&per_page=5"]

    func bodies(_ door: Door, seed: UInt64) async throws -> [String] {
        let served = try Served(Self.dataScript, door: door, seed: seed)
        defer { served.stop() }
        var out: [String] = []
        for path in Self.paths {
            let reply = try await served.fetch(path)
            #expect(reply.status == 200, "\(door) \(path): \(reply.body)")
            out.append(reply.body)
        }
        return out
    }

    @Test("the same seed gives byte-identical bodies on two runs and through both doors; another seed gives others")
    func sameSeedSameBodies() async throws {
        let first = try await bodies(.inProcess, seed: 42)
        let again = try await bodies(.inProcess, seed: 42)
        let socket = try await bodies(.socket, seed: 42)
        let other = try await bodies(.socket, seed: 43)
        #expect(first == again)
        #expect(first == socket)
        // The key fixes a user: the same on every call; the request stream varies per call.
        #expect(first[0] == first[2] && first[0] != first[1])
        #expect(first[3] != first[4])
        #expect(zip(first, other).filter { $0 != $1 }.count >= 6, "\(other)")

        let user = try JSONValue(parsing: Array(first[0].utf8))
        let iban = try #require(user["iban"]?.stringValue)
        #expect(Self.ibanValid(iban), "\(iban)")
        let card = try #require(user["card"]?.stringValue)
        #expect(card.count == 16 && card.hasPrefix("5") && Self.luhnValid(card), "\(card)")
        #expect(user["email"]?.stringValue?.hasSuffix(".com") == true || user["email"]?.stringValue?.contains("@example.") == true)
        let joined = try #require(user["joined"]?.stringValue)
        #expect(joined >= "2020-01-01" && joined <= "2024-12-31")
        #expect(user["ja"]?.stringValue?.range(of: #"^0\d0?-\d{4}-\d{4}$"#, options: .regularExpression) != nil, "\(first[0])")
        let order = try JSONValue(parsing: Array(first[6].utf8))
        #expect(order["id"]?.stringValue?.range(of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#, options: .regularExpression) != nil)
        #expect(order["items"]?[1] != nil && order["items"]?[2] == nil)
        #expect(order["items"]?[0]?["sku"]?.stringValue?.range(of: #"^[A-Z]{3}-[0-9]{4}$"#, options: .regularExpression) != nil, "\(first[6])")
        #expect(first[6] != first[7])
        let page = try JSONValue(parsing: Array(first[8].utf8))
        #expect(page[4] != nil && page[5] == nil && page[0]?["id"] == .integer(6))
    }

    static func ibanValid(_ iban: String) -> Bool {
        let moved = Array((iban.dropFirst(4) + iban.prefix(4)).utf8)
        var r = 0
        for c in moved { r = c >= 65 ? (r * 100 + Int(c) - 55) % 97 : (r * 10 + Int(c) - 48) % 97 }
        return r == 1
    }

    static func luhnValid(_ number: String) -> Bool {
        var sum = 0
        for (i, c) in number.reversed().enumerated() {
            let d = Int(String(c))!
            let v = i % 2 == 1 ? d * 2 : d
            sum += v > 9 ? v - 9 : v
        }
        return sum % 10 == 0
    }

    @Test("a resource keeps what a test POSTs: create, list paginated and filtered, patch, delete, 404, 400", arguments: Door.allCases)
    func resourceRoundTrip(_ door: Door) async throws {
        let served = try Served(#"""
        mock.resource("/pets", {
          seed = { { name = "Rex", status = "available" }, { name = "Tom", status = "sold" }, { name = "Kit", status = "available" } },
          schema = { type = "object", required = { "name" }, properties = { name = { type = "string", minLength = 1 } } },
          on_create = function(item) item.status = item.status or "available" end,
        })
        """#, door: door)
        defer { served.stop() }
        let created = try await served.fetch("/pets", method: "POST", body: #"{"name": "Bo"}"#, headers: ["Content-Type": "application/json"])
        #expect(created.status == 201, "\(created.body)")
        #expect(created.headers["location"] == "/pets/4")
        #expect(created.body == #"{"id":4,"name":"Bo","status":"available"}"#)

        let page = try await served.fetch("/pets?status=available&page=1&per_page=2")
        #expect(page.status == 200)
        #expect(page.headers["x-total-count"] == "3")
        #expect(page.body == #"[{"id":1,"name":"Rex","status":"available"},{"id":3,"name":"Kit","status":"available"}]"#)
        #expect(page.headers["link"]?.contains(#"</pets?status=available&page=2&per_page=2>; rel="next""#) == true, "\(page.headers)")
        let sorted = try await served.fetch("/pets?sort=-name&limit=2&offset=1")
        #expect(sorted.body == #"[{"id":1,"name":"Rex","status":"available"},{"id":3,"name":"Kit","status":"available"}]"#, "\(sorted.body)")

        let patched = try await served.fetch("/pets/2", method: "PATCH", body: #"{"status": "available", "tag": null, "age": 3}"#)
        #expect(patched.status == 200 && patched.body == #"{"age":3,"id":2,"name":"Tom","status":"available"}"#, "\(patched.body)")
        #expect(try await served.fetch("/pets/2").body == patched.body)
        let replaced = try await served.fetch("/pets/2", method: "PUT", body: #"{"name": "Tommy"}"#)
        #expect(replaced.body == #"{"id":2,"name":"Tommy"}"#)

        let deleted = try await served.fetch("/pets/4", method: "DELETE")
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        let gone = try await served.fetch("/pets/4")
        #expect(gone.status == 404 && gone.body.contains(#""error":"not found""#), "\(gone.body)")
        #expect(try await served.fetch("/pets/4", method: "PATCH", body: "{}").status == 404)

        let notObject = try await served.fetch("/pets", method: "POST", body: "[1, 2]")
        #expect(notObject.status == 400 && notObject.body.contains("JSON object"), "\(notObject.body)")
        let invalid = try await served.fetch("/pets", method: "POST", body: #"{"name": ""}"#)
        #expect(invalid.status == 400 && invalid.body.contains("/name"), "\(invalid.body)")
        let badPage = try await served.fetch("/pets?page=0")
        #expect(badPage.status == 400)
        #expect(try await served.fetch("/pets").headers["x-total-count"] == "3")
    }

    /// Which of `count` requests failed (their numbers), each through a fresh instance.
    func failures(_ door: Door, seed: UInt64, count: Int) async throws -> [Int] {
        let served = try Served(#"""
        mock.chaos{ path = "/api/", error_rate = 0.1, status = 503 }
        mock.get("/api/items", mock.json({ ok = true }))
        mock.get("/health", "ok")
        """#, door: door, seed: seed)
        defer { served.stop() }
        var failed: [Int] = []
        for i in 0..<count {
            let reply = try await served.fetch("/api/items")
            if reply.status != 200 {
                #expect(reply.status == 503 && reply.body.contains("chaos"))
                failed.append(i)
            }
        }
        // Outside the path prefix: untouched.
        for _ in 0..<50 { #expect(try await served.fetch("/health").status == 200) }
        // The journal (its last 1,000 entries) says which requests chaos touched.
        let entries = served.moonmock.engine.journal.entries().filter { $0.path == "/api/items" }
        #expect(!entries.isEmpty && entries.allSatisfy { ($0.chaos == "error_rate") == ($0.status == 503) })
        #expect(entries.contains { $0.chaos == "error_rate" })
        return failed
    }

    @Test("chaos at 10 % fails 10 % ± 3 % of 2,000 requests, the same ones again under the same seed", arguments: Door.allCases)
    func errorRate(_ door: Door) async throws {
        let first = try await failures(door, seed: 7, count: 2000)
        #expect((140...260).contains(first.count), "\(first.count) of 2000 failed")
        let again = try await failures(door, seed: 7, count: 2000)
        #expect(again == first)
        let other = try await failures(door, seed: 8, count: 2000)
        #expect(other != first)
    }

    @Test("a rate limit of 10 rps answers 429 with Retry-After past it, and lets requests through again a second later", arguments: Door.allCases)
    func rateLimit(_ door: Door) async throws {
        let served = try Served(#"mock.get("/limited", "ok", { chaos = { rate_limit = { rps = 10 } } })"#, door: door)
        defer { served.stop() }
        // 40 at once: the burst (10) passes, and about 10 more a second; the rest get 429.
        let started = Date()
        let replies = try await withThrowingTaskGroup(of: Served.Reply.self) { group in
            for _ in 0..<40 { group.addTask { try await served.fetch("/limited") } }
            var all: [Served.Reply] = []
            for try await r in group { all.append(r) }
            return all
        }
        let elapsed = Date().timeIntervalSince(started)
        let passed = replies.filter { $0.status == 200 }.count, limited = replies.filter { $0.status == 429 }
        #expect(passed + limited.count == 40)
        let allowed = 10 + Int((elapsed * 10).rounded(.up)) + 1
        #expect(passed >= 10 && passed <= allowed, "\(passed) passed in \(elapsed) s")
        #expect(!limited.isEmpty || elapsed > 2.5, "none limited in \(elapsed) s")
        for reply in limited {
            #expect(reply.headers["retry-after"].flatMap(Int.init).map { $0 >= 1 } == true && reply.body.contains("rate limit"))
        }
        try await Task.sleep(nanoseconds: 1_100_000_000)
        #expect(try await served.fetch("/limited").status == 200)
    }

    @Test("a profile switched on takes effect on the next request and stops after its duration", arguments: Door.allCases)
    func profileForAWhile(_ door: Door) async throws {
        let served = try Served(#"""
        mock.chaos_profile("down", { error_rate = 1, status = 502, body = { message = "upstream down" } })
        mock.get("/x", "ok")
        """#, door: door)
        defer { served.stop() }
        #expect(try await served.fetch("/x").status == 200)
        func switchOn(_ milliseconds: Int) async throws {
            if let server = served.server {
                let on = try await Served.fetch(plainSession, server.baseURL + "/__moonmock/chaos", method: "PUT",
                                                body: #"{"profile": "down", "duration_ms": \#(milliseconds)}"#)
                #expect(on.status == 200 && on.body.contains(#""profile":"down""#), "\(on.body)")
            } else {
                try served.moonmock.chaos(profile: "down", durationMilliseconds: Double(milliseconds))
            }
        }
        // On for a minute: the next request fails (however slow the machine).
        try await switchOn(60_000)
        let failed = try await served.fetch("/x")
        #expect(failed.status == 502 && failed.body == #"{"message":"upstream down"}"#, "\(failed.status) \(failed.body)")
        // Switched on again for 200 ms, in its place: over by the time 1.5 s have passed.
        try await switchOn(200)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(try await served.fetch("/x").status == 200)
        #expect(served.moonmock.engine.journal.entries().compactMap(\.chaos) == ["error_rate"])
    }
}
