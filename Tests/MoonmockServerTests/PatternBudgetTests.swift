import Foundation
import MoonmockCore
import MoonmockScript
import MoonmockServer
import LuaBridge
import Testing

/// Lua patterns match in C, out of the instruction budget's reach: each of string.find, match,
/// gmatch and gsub is measured first and stopped like a runaway loop when it would take too long.
@Suite("Lua patterns under the budget")
struct PatternBudgetTests {
    static let dashes = String(repeating: "-", count: 1500)
    /// A budget of 2 M instructions (a tenth of the default), so that the measuring costs the
    /// rest of the suite little CPU; the runaway needs hundreds of millions of steps.
    static let options = ScriptOptions(limits: LuaLimits(instructions: 2_000_000))

    @Test("a backtracking pattern answers 500 within the budget's time while other connections are served",
          arguments: ["string.find", "string.match", "string.gmatch", "string.gsub", "method"])
    func runaway(call: String) async throws {
        let expression: String
        switch call {
        case "string.gmatch": expression = #"(function() for a in string.gmatch(req.query.s, "(.-)-(.-)-(.-)-end") do return a end end)()"#
        case "string.gsub": expression = #"string.gsub(req.query.s, "^(.-)-(.-)-(.-)-end$", "%1")"#
        case "method": expression = #"req.query.s:match("^(.-)-(.-)-(.-)-end$")"#
        default: expression = #"\#(call)(req.query.s, "^(.-)-(.-)-(.-)-end$")"#
        }
        let server = try startServer("""
            mock.get("/p", function(req) local r = \(expression); return { r = r or false } end)
            mock.get("/users/:id", function(req) return { id = req.params.id } end)
            """, options: Self.options)
        defer { server.stop() }
        let slow = Task { await onThread { () -> (String, Double) in
            let started = Date()
            let r = RawHTTP.exchange(server, "GET /p?s=\(Self.dashes) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout: 20)
            return (r.text, Date().timeIntervalSince(started))
        } }
        // Meanwhile the server answers others (two workers in tests; the guard keeps each short).
        try await Task.sleep(nanoseconds: 20_000_000)
        let other = await onThread { RawHTTP.exchange(server, "GET /users/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(other.text.hasPrefix("HTTP/1.1 200"))
        let (text, elapsed) = await slow.value
        #expect(text.hasPrefix("HTTP/1.1 500") && text.contains("backtracks too much"), "\(text.prefix(400))")
        #expect(elapsed < 3, "took \(elapsed) s")
    }

    @Test("a mock.match predicate that would backtrack without end stops within the budget's time: a 500 that says so")
    func matcher() async throws {
        let server = try startServer("""
            mock.route { method = "GET", path = "/q", query = { s = mock.match("^(.-)-(.-)-(.-)-end$") }, respond = mock.text("matched") }
            mock.get("/q", mock.text("fallback"))
            """, options: Self.options)
        defer { server.stop() }
        let (text, elapsed) = await onThread { () -> (String, Double) in
            let started = Date()
            let r = RawHTTP.exchange(server, "GET /q?s=\(Self.dashes) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout: 20)
            return (r.text, Date().timeIntervalSince(started))
        }
        #expect(text.hasPrefix("HTTP/1.1 500") && text.contains("query.s") && text.contains("backtracks too much"), "\(text.prefix(400))")
        #expect(!text.contains("fallback"))
        #expect(elapsed < 3, "took \(elapsed) s")
        let ok = await onThread { RawHTTP.exchange(server, "GET /q?s=a-b-c-end HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text }
        #expect(ok.hasSuffix("matched"))
    }

    @Test("ordinary patterns give Lua's results, captures, anchors, sets, %b, %f and back-references included")
    func ordinary() async throws {
        let server = try startServer(#"""
            mock.get("/p", function()
              local t = {}
              t[1] = { string.find("hello world", "o w") }
              t[2] = { ("key=value; k2=v2"):match("(%w+)=(%w+)") }
              local n = 0; for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do n = n + tonumber(v) end; t[3] = n
              t[4] = { string.gsub("hello world", "o", "0", 1) }
              t[5] = { string.find("THE (quick) fox", "%((%a+)%)") }
              t[6] = { string.match("f(a(b)c)d", "%b()") }
              t[7] = { string.gsub("THE (quick) fox", "%f[%a]%a+", "W") }
              t[8] = { string.match('say "hi" now', '(["\'])(.-)%1') }
              t[9] = { string.find("abc", "b", 1, true) }
              t[10] = { string.match("  trim  ", "^%s*(.-)%s*$") }
              t[11] = { string.match(string.rep("a", 100000) .. "b", "a+b") ~= nil }
              t[12] = { pcall(string.find, "x", "[a") }
              return t
            end)
            """#)
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "GET /p HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text }
        let body = String(r.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
        #expect(body.hasPrefix(#"[[5,7],["key","value"],6,["hell0 world",1],[5,11,"quick"],["(a(b)c)"],["W (W) W",3],["\"","hi"],[2,2],["trim"],[true],[false,"#), "\(body)")
        #expect(body.contains("malformed pattern"), "\(body)")
    }
}
