import Foundation
import MoonmockCore
import MoonmockScript

/// Time per request through the engine, for the two measured routes of
/// `examples/bench/mocks.lua`, first with warm caches and then with `--evict BYTES` written
/// between requests (default 4 MiB, the size of this machine's L2 cache). A transport runs the
/// engine between other work — URLSession's, the kernel's — on whichever core is free, so the
/// evicted figure is the one that predicts `bench-inprocess` and `bench-server`: it counts the
/// cache lines a request touches more than the instructions it runs.
enum ColdBench {
    static func run(_ arguments: [String]) -> Int32 {
        let evict = arguments.option("--evict", default: 4 << 20)
        let requests = arguments.option("--requests", default: 20_000)
        let engine = Engine(journalCapacity: 1000)
        do { try engine.loadScript(file: "examples/bench/mocks.lua") } catch {
            print("cannot load examples/bench/mocks.lua: \(error)")
            return 1
        }
        let body = Array(#"{"operationName":"GetUser","variables":{"id":"7"},"query":"query GetUser($id: ID!) { user(id: $id) { id name } }"}"#.utf8)
        let cases: [(String, () -> MockRequest)] = [
            ("GET /users/:id", { MockRequest(method: "GET", url: "http://api.example.com/users/7") }),
            ("GraphQL GetUser", { MockRequest(method: "POST", url: "http://api.example.com/graphql",
                                              headers: ["Content-Type": "application/json"], body: body) }),
        ]
        var junk = [UInt8](repeating: 1, count: max(1, evict))
        print("engine: nanoseconds per request (request built + handled), \(requests) requests")
        for (name, make) in cases {
            var figures: [UInt64] = []
            for evicting in [false, true] {
                var total: UInt64 = 0
                for n in 0..<requests {
                    if evicting { junk.withUnsafeMutableBytes { _ = memset($0.baseAddress!, Int32(n & 0xff), $0.count) } }
                    let start = DispatchTime.now().uptimeNanoseconds
                    let exchange = engine.handle(make())
                    total += DispatchTime.now().uptimeNanoseconds - start
                    guard exchange.matched else { print("\(name) did not match"); return 1 }
                }
                figures.append(total / UInt64(requests))
            }
            print(String(format: "  %-16@ warm %6llu ns   %d KiB evicted between requests %6llu ns", name as NSString,
                         figures[0], evict >> 10, figures[1]))
        }
        return 0
    }
}
