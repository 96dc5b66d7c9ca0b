import Foundation
import MoonmockCore
import MoonmockScript

/// Benchmarks run by `scripts/bench-*`. Figures are ratios against a baseline measured in the
/// same run, because the machines are shared and noisy.
enum Bench {
    static func main(_ arguments: [String]) async -> Int32 {
        switch arguments.first {
        case "engine": return EngineBench.run(Array(arguments.dropFirst()))
        case "cold": return ColdBench.run(Array(arguments.dropFirst()))
        case "inprocess": return await InProcessBench.run(Array(arguments.dropFirst()))
        case "parallel": return ParallelBench.run(Array(arguments.dropFirst()))
        case "rule": return RuleBench.run(Array(arguments.dropFirst()))
        case "schema": return SchemaBench.run(Array(arguments.dropFirst()))
        case "data": return DataBench.run(seconds: Array(arguments.dropFirst()).option("--seconds", default: 0.4), rounds: Array(arguments.dropFirst()).option("--rounds", default: 3))
        default:
            FileHandle.standardError.write(Data("usage: MoonmockBench engine|cold|inprocess|parallel|rule|schema|data [options]\n".utf8))
            return 64
        }
    }
}

/// Requests per second through the engine (no transport) for the same requests against scripts
/// of 10, 1,000 and 10,000 rules. The rules the requests hit are registered last, so a linear
/// scan would pay for every rule before them.
enum EngineBench {
    struct Case {
        let name: String
        let request: MockRequest
        let expect: String
    }

    static func run(_ arguments: [String]) -> Int32 {
        let seconds = arguments.option("--seconds", default: 0.4)
        let rounds = arguments.option("--rounds", default: 3)
        let sizes = [10, 1_000, 10_000]
        let cases = [
            Case(name: "GET, Lua handler", request: MockRequest(method: "GET", url: "http://localhost/target/items/42"), expect: "GET /target/items/:id"),
            Case(name: "GraphQL, Lua handler", request: MockRequest(method: "POST", url: "http://localhost/graphql",
                 headers: ["Content-Type": "application/json"],
                 body: Array(#"{"operationName":"GetTarget","variables":{"id":"42"},"query":"query GetTarget($id: ID!) { user(id: $id) { id name } }"}"#.utf8)),
                 expect: "graphql GetTarget"),
            Case(name: "GET, static JSON", request: MockRequest(method: "GET", url: "http://localhost/static/target"), expect: "GET /static/target"),
        ]

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        var engines: [Int: Engine] = [:]
        for size in sizes {
            let file = dir.appendingPathComponent("rules\(size).lua")
            try? Data(script(rules: size).utf8).write(to: file)
            let engine = Engine(journalCapacity: 1000)
            let started = Date()
            do { try engine.loadScript(file: file.path) } catch {
                print("cannot load \(size) rules: \(error)")
                return 1
            }
            print("loaded \(size) rules in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
            for c in cases where engine.handle(c.request).ruleID != c.expect {
                print("\(c.name): wrong rule for \(size) rules: \(engine.handle(c.request).ruleID ?? "none")")
                return 1
            }
            engines[size] = engine
        }

        // rps[case][size] = best rate over the rounds; sizes alternate within each round.
        var rates: [String: [Int: [Double]]] = [:]
        for _ in 0..<rounds {
            for c in cases {
                for size in sizes {
                    rates[c.name, default: [:]][size, default: []].append(measure(engines[size]!, c.request, seconds: seconds))
                }
            }
        }

        print("")
        print("engine throughput, one thread, best of \(rounds) rounds (\(seconds) s each), ratios against 10 rules in the same run")
        print(pad("case", 22) + sizes.map { pad("\($0) rules", 16) }.joined() + pad("time 1k/10", 12) + "time 10k/10")
        var worst = 0.0
        for c in cases {
            let best = sizes.map { rates[c.name]![$0]!.max()! }
            let r1k = best[0] / best[1], r10k = best[0] / best[2]
            worst = max(worst, r10k)
            print(pad(c.name, 22) + best.map { pad(String(format: "%.0f rps", $0), 16) }.joined()
                  + pad(String(format: "%.2fx", r1k), 12) + String(format: "%.2fx", r10k))
        }
        print(String(format: "worst time ratio 10,000 vs 10 rules: %.2fx (target <= 1.30x) %@", worst, worst <= 1.3 ? "PASS" : "FAIL"))
        return DataBench.run(seconds: seconds, rounds: rounds)
    }

    static func measure(_ engine: Engine, _ request: MockRequest, seconds: Double) -> Double {
        for _ in 0..<200 { _ = engine.handle(request) }   // warm up
        var count = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let limit = UInt64(seconds * 1e9)
        var elapsed: UInt64 = 0
        repeat {
            for _ in 0..<256 { _ = engine.handle(request) }
            count += 256
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        } while elapsed < limit
        return Double(count) / (Double(elapsed) / 1e9)
    }

    static func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count + 1), withPad: " ", startingAt: 0) }

    /// A script with `rules` rules: a third literal GET routes, a third parameter-first POST
    /// routes, a third GraphQL operations; the three measured rules come last.
    static func script(rules: Int) -> String {
        var lines = ["-- generated by MoonmockBench: \(rules) rules"]
        let filler = rules - 3
        for i in 0..<filler {
            switch i % 3 {
            case 0: lines.append("mock.get(\"/svc\(i)/items/:id\", function(req) return { id = req.params.id, svc = \(i) } end)")
            case 1: lines.append("mock.post(\"/:tenant/res\(i)\", mock.json({ created = \(i) }, { status = 201 }))")
            default: lines.append("mock.graphql(\"Op\(i)\", function(req) return { data = { n = \(i) } } end)")
            }
        }
        lines.append("mock.get(\"/target/items/:id\", function(req) return { id = tonumber(req.params.id), name = \"User \" .. req.params.id } end)")
        lines.append("mock.graphql(\"GetTarget\", function(req) return { data = { user = { id = req.json.variables.id, name = \"Target\" } } } end)")
        lines.append("mock.get(\"/static/target\", mock.json({ ok = true }))")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension [String] {
    /// The value after `name` in the benchmark's arguments, or `fallback` when the flag is
    /// absent, last, or not a `T`.
    func option<T: LosslessStringConvertible>(_ name: String, default fallback: T) -> T {
        guard let i = firstIndex(of: name), i + 1 < count, let value = T(self[i + 1]) else { return fallback }
        return value
    }
}
