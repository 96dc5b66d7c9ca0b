import Foundation
import MoonmockCore
import MoonmockServer
import Testing

/// Ceilings on what a script can make the host hold, and an API no handler can break.
@Suite("Host limits")
struct HostLimitsTests {
    /// One exchange, on a thread of its own (blocking reads stay off the pool other tests share).
    func get(_ server: MoonmockServer, _ path: String) async -> String {
        await onThread { RawHTTP.exchange(server, "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").text }
    }

    @Test("mock and its tables are read-only to handlers: the request that tries fails, every later one works",
          arguments: ["mock.text = nil", "mock.json.encode = nil", "mock.state.get = nil", "mock.brand_new = 1", "rawset(mock, 'text', nil)"])
    func readOnlyAPI(statement: String) async throws {
        let server = try startServer("""
            mock.get("/break", function() \(statement); return "changed" end)
            mock.get("/ok", function() return mock.text(mock.json.encode({ n = mock.state:incr("n") })) end)
            """)
        defer { server.stop() }
        let broken = await get(server, "/break")
        #expect(broken.hasPrefix("HTTP/1.1 500") && broken.contains("read-only"), "\(broken)")
        for n in 1...3 {
            let ok = await get(server, "/ok")
            #expect(ok.hasPrefix("HTTP/1.1 200") && ok.hasSuffix(#"{"n":\#(n)}"#), "\(ok)")
        }
    }

    @Test("the script may still read, iterate and call mock as before")
    func readingStillWorks() async throws {
        let server = try startServer("""
            local names = {}
            for k in pairs(mock) do names[#names + 1] = k end
            table.sort(names)
            local has = {}
            for _, k in ipairs(names) do has[k] = true end
            mock.get("/api", function() return { text = has.text == true, json = has.json == true, state = type(mock.state.incr) } end)
            """)
        defer { server.stop() }
        #expect(await get(server, "/api").hasSuffix(#"{"json":true,"state":"function","text":true}"#))
    }

    @Test("mock.log output kept per request is capped, and says where it was cut")
    func logCap() async throws {
        let server = try startServer("""
            mock.get("/chatty", function() for i = 1, 20000 do mock.log(string.rep("x", 50), i) end; return "ok" end)
            """)
        defer { server.stop() }
        #expect(await get(server, "/chatty").hasSuffix("ok"))
        let journal = try JSONValue(parsing: Array(await get(server, "/__moonmock/requests").split(separator: "\r\n\r\n", maxSplits: 1)[1].utf8))
        let list = journal["requests"] ?? journal
        guard case .array(let entries) = list, let entry = entries.first(where: { $0["url"]?.stringValue?.hasSuffix("/chatty") == true }),
              case .array(let logs)? = entry["logs"] else {
            Issue.record("no journal entry: \(journal)")
            return
        }
        let bytes = logs.compactMap(\.stringValue).reduce(0) { $0 + $1.utf8.count }
        #expect(bytes <= 64 * 1024 + 200, "\(bytes) bytes of log")
        #expect(logs.last?.stringValue?.contains("log output cut") == true)
    }

    @Test("mock.state has a size limit: a write past it is a Lua error naming the limit; the server serves on")
    func stateLimit() async throws {
        let engine = Engine(environment: .fixed(now: 1_700_000_000, seed: 1), state: StateStore(limitBytes: 10_000))
        try engine.loadScript(source: """
            mock.get("/fill", function()
              for i = 1, 1000 do mock.state:set("k" .. i, string.rep("x", 100)) end
              return "filled"
            end)
            mock.get("/count", function() return { n = #mock.state:keys() } end)
            mock.get("/flush", function() mock.state:flush(); return "flushed" end)
            """)
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        defer { server.stop() }
        let full = await get(server, "/fill")
        #expect(full.hasPrefix("HTTP/1.1 500") && full.contains("mock.state is full") && full.contains("10000 bytes"), "\(full)")
        let count = await get(server, "/count")
        #expect(count.hasPrefix("HTTP/1.1 200"))
        #expect(engine.state.bytesUsed <= 10_000)
        #expect(await get(server, "/flush").hasSuffix("flushed"))
        #expect(await get(server, "/count").hasSuffix(#"{"n":0}"#))
    }
}
