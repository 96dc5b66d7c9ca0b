import Foundation
import MoonmockCore
import MoonmockScript

/// What running the engine on several cores at once costs each request: CPU time per request
/// with one thread, then with N threads on the same engine (one Lua VM per thread), in
/// alternating rounds. Everything the threads write in common — counters, locks, reference
/// counts of shared objects — moves cache lines between cores and shows up as the ratio.
///
/// `MoonmockBench parallel [--threads N] [--rounds N] [--seconds S] [--script FILE]`
enum ParallelBench {
    static func run(_ arguments: [String]) -> Int32 {
        let threads = arguments.option("--threads", default: 2)
        let rounds = arguments.option("--rounds", default: 5)
        let seconds = arguments.option("--seconds", default: 0.5)
        let script = arguments.option("--script", default: "examples/bench/mocks.lua")
        let engine = Engine(journalCapacity: 1000)
        do { _ = try engine.loadScript(file: script, vms: threads) } catch {
            print("cannot load \(script): \(error)")
            return 1
        }
        let requests = [
            ("GET /users/:id", MockRequest(method: "GET", scheme: "http", authority: "127.0.0.1:8080", target: "/users/7",
                                           headers: ["Host": "127.0.0.1:8080"], body: [])),
            ("GraphQL GetUser", MockRequest(method: "POST", scheme: "http", authority: "127.0.0.1:8080", target: "/graphql",
                                            headers: ["Host": "127.0.0.1:8080", "Content-Type": "application/json"],
                                            body: Array(#"{"operationName":"GetUser","variables":{"id":"7"}}"#.utf8))),
        ]
        print("engine CPU time per request: 1 thread, then \(threads) threads on one engine (\(threads) VMs); median of \(rounds) rounds")
        print("(a ratio near 1 means the threads share nothing they write; each shared cache line written per request adds to it)")
        for (name, request) in requests {
            guard engine.handle(request).response.status == 200 else { print("\(name): not answered"); return 1 }
            var one: [Double] = [], many: [Double] = []
            for _ in 0..<rounds {
                one.append(cpuPerRequest(engine, request, threads: 1, seconds: seconds))
                many.append(cpuPerRequest(engine, request, threads: threads, seconds: seconds))
            }
            let a = one.sorted()[rounds / 2], b = many.sorted()[rounds / 2]
            let minA = one.min()!, minB = many.min()!
            print(String(format: "  %-16@ 1 thread %6.3f us   %d threads %6.3f us   ratio %.2fx   (best rounds: %.3f / %.3f us, %.2fx)",
                         name as NSString, a, threads, b, b / a, minA, minB, minB / minA))
        }
        return 0
    }

    /// CPU microseconds per request (thread CPU clocks summed) with `threads` threads looping.
    static func cpuPerRequest(_ engine: Engine, _ request: MockRequest, threads: Int, seconds: Double) -> Double {
        let done = DispatchGroup()
        let counts = UnsafeMutableBufferPointer<(Int, Double)>.allocate(capacity: threads)
        defer { counts.deallocate() }
        let box = UncheckedBox(counts)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        for t in 0..<threads {
            done.enter()
            Thread {
                var n = 0
                let cpu0 = threadCPU()
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    for _ in 0..<64 { _ = engine.handle(request) }
                    n += 64
                }
                box.value[t] = (n, threadCPU() - cpu0)
                done.leave()
            }.start()
        }
        done.wait()
        let total = counts.reduce(0) { $0 + $1.0 }, cpu = counts.reduce(0.0) { $0 + $1.1 }
        return cpu * 1e6 / Double(total)
    }

    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
