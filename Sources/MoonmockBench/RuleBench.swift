import Foundation
import MoonmockCore
import MoonmockScript

/// What one request costs the engine against a script of your own: the tool to profile a rule
/// (`perf record -p`) or to compare two versions of a script. (`MoonmockBench cold` prices
/// the same with cold caches.)
///
/// ```
/// MoonmockBench rule examples/bench/mocks.lua GET http://localhost/users/7 --seconds 5
/// ```
enum RuleBench {
    static func run(_ arguments: [String]) -> Int32 {
        let positional = arguments.prefix { !$0.hasPrefix("--") }
        guard positional.count >= 3 else {
            FileHandle.standardError.write(Data("usage: MoonmockBench rule SCRIPT METHOD URL [BODY] [--seconds S]\n".utf8))
            return 64
        }
        let args = Array(positional)
        let seconds = arguments.option("--seconds", default: 2.0)
        let engine = Engine(journalCapacity: 1000)
        do { try engine.loadScript(file: args[0]) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
        let request = MockRequest(method: args[1], url: args[2], headers: ["Content-Type": "application/json"],
                                  body: args.count > 3 ? Array(args[3].utf8) : [])
        let first = engine.handle(request)
        print("\(args[1]) \(args[2]) → \(first.response.status) by \(first.ruleID ?? "no rule")")
        let rate = EngineBench.measure(engine, request, seconds: seconds)
        print(String(format: "%.0f requests/s, %.2f µs each (one thread)", rate, 1e6 / rate))
        return 0
    }
}
