import Foundation
import MoonmockCore
import MoonmockScript

/// Part of `scripts/bench-engine`: what `mock.fake.name()` and a 20-field `mock.schema` cost per
/// call inside a handler. Each handler runs its call in a loop of `n`; the same loop around a
/// local assignment is the baseline, subtracted.
enum DataBench {
    static let script = #"""
    local Order = { type = "object", required = {}, properties = {} }
    local kinds = { { type = "string", format = "email" }, { type = "string", format = "uuid" }, { type = "integer", minimum = 1, maximum = 99 },
                    { type = "string", format = "date-time" }, { type = "number", minimum = 0, maximum = 10 }, { type = "string" },
                    { enum = { "a", "b", "c" } }, { type = "boolean" }, { type = "string", pattern = "^[A-Z]{3}-[0-9]{4}$" }, { type = "string", format = "date" } }
    for i = 1, 20 do
      local name = ({ "name", "email", "city", "id", "total", "status", "placed_at", "note", "sku", "paid", "phone", "company",
                      "street", "postcode", "country", "qty", "tag", "created_at", "avatar_url", "comment" })[i]
      Order.properties[name] = kinds[(i - 1) % #kinds + 1]
      Order.required[#Order.required + 1] = name
    end
    mock.get("/loop/:n", function(req) local x; for i = 1, tonumber(req.params.n) do x = i end; return "ok" end)
    mock.get("/fake/:n", function(req) local x; for i = 1, tonumber(req.params.n) do x = mock.fake.name() end; return "ok" end)
    mock.get("/schema/:n", function(req) local x; for i = 1, tonumber(req.params.n) do x = mock.schema(Order) end; return "ok" end)
    mock.get("/static", mock.json({ ok = true }))
    """#

    /// Nanoseconds per request to `path`, the best of `rounds`.
    static func time(_ engine: Engine, _ path: String, seconds: Double, rounds: Int) -> Double {
        let request = MockRequest(method: "GET", url: "http://localhost" + path)
        precondition(engine.handle(request).response.status == 200, "\(path): \(String(decoding: engine.handle(request).response.body, as: UTF8.self))")
        return (0..<rounds).map { _ in 1e9 / EngineBench.measure(engine, request, seconds: seconds) }.min()!
    }

    static func run(seconds: Double, rounds: Int) -> Int32 {
        let engine = Engine(journalCapacity: 1000)
        do { try engine.loadScript(source: script) } catch {
            print("data bench: \(error)")
            return 1
        }
        let n = 200, m = 20
        // For a profiler: one route only (MOONMOCK_BENCH_ONLY=/schema/20).
        if let only = ProcessInfo.processInfo.environment["MOONMOCK_BENCH_ONLY"] {
            print(String(format: "%@: %.2f µs per request", only, time(engine, only, seconds: seconds, rounds: rounds) / 1000))
            return 0
        }
        let loop = time(engine, "/loop/\(n)", seconds: seconds, rounds: rounds)
        let fake = time(engine, "/fake/\(n)", seconds: seconds, rounds: rounds)
        let loopM = time(engine, "/loop/\(m)", seconds: seconds, rounds: rounds)
        let schema = time(engine, "/schema/\(m)", seconds: seconds, rounds: rounds)
        let request = time(engine, "/static", seconds: seconds, rounds: rounds)
        let perName = (fake - loop) / Double(n) / 1000, perSchema = (schema - loopM) / Double(m) / 1000
        print("")
        print("fake data in a handler, one thread, best of \(rounds) rounds; a static route's request: \(String(format: "%.2f", request / 1000)) µs")
        print(String(format: "mock.fake.name()            %6.2f µs per call (%.2fx a static request; target < 2 µs) %@", perName, perName * 1000 / request,
                     perName < 2 ? "PASS" : "FAIL"))
        print(String(format: "mock.schema, 20 fields      %6.2f µs per call (%.2fx a static request; target < 20 µs) %@", perSchema, perSchema * 1000 / request,
                     perSchema < 20 ? "PASS" : "FAIL"))
        return 0
    }
}
