import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// Time per request through `URLSession` with Moonmock serving `examples/bench/mocks.lua`,
/// against an empty `URLProtocol` that returns a constant response: same session kind, same
/// requests, alternating rounds in one run.
enum InProcessBench {
    static func run(_ arguments: [String]) async -> Int32 {
        let requests = arguments.option("--requests", default: 3000)
        let rounds = arguments.option("--rounds", default: 5)
        let script = arguments.option("--script", default: "examples/bench/mocks.lua")
        let kind = arguments.option("--session", default: "ephemeral")
        let moonmock: Moonmock
        do { moonmock = try Moonmock(script: URL(fileURLWithPath: script)) } catch {
            print("cannot load \(script): \(error)")
            return 1
        }
        func configuration() -> URLSessionConfiguration { kind == "default" ? .default : .ephemeral }
        let baselineConfiguration = configuration()
        baselineConfiguration.protocolClasses = [ConstantProtocol.self]
        let baseline = URLSession(configuration: baselineConfiguration)
        // The empty protocol again, in a session whose cache skips the lookup as Moonmock's
        // configuration does: what Moonmock's own work costs, apart from that saving.
        let lookupFreeConfiguration = configuration()
        lookupFreeConfiguration.protocolClasses = [ConstantProtocol.self]
        lookupFreeConfiguration.urlCache = NoLookupCache()
        let lookupFree = URLSession(configuration: lookupFreeConfiguration)
        let mocked = URLSession(configuration: moonmock.makeConfiguration(configuration()))
        // `--calibrate US`: a third side, the empty protocol spending US microseconds of CPU in
        // startLoading — what a given amount of work there costs through URLSession.
        let calibrate = arguments.option("--calibrate", default: 0)
        BusyProtocol.nanoseconds = UInt64(calibrate) * 1000
        let busyConfiguration = configuration()
        busyConfiguration.protocolClasses = [BusyProtocol.self]
        let busy = URLSession(configuration: busyConfiguration)

        var get = URLRequest(url: URL(string: "http://api.example.com/users/7")!)
        get.httpMethod = "GET"
        var graphql = URLRequest(url: URL(string: "http://api.example.com/graphql")!)
        graphql.httpMethod = "POST"
        graphql.setValue("application/json", forHTTPHeaderField: "Content-Type")
        graphql.httpBody = Data(#"{"operationName":"GetUser","variables":{"id":"7"},"query":"query GetUser($id: ID!) { user(id: $id) { id name } }"}"#.utf8)

        for (request, expect) in [(get, #"{"email":"user7@example.com","id":7,"name":"User 7"}"#), (graphql, #"{"data":{"user":{"id":"7","name":"User 7"}}}"#)] {
            guard let (data, _) = try? await mocked.data(for: request), String(decoding: data, as: UTF8.self) == expect else {
                print("Moonmock answered \(request.url!.path) wrongly")
                return 1
            }
        }

        // `--only empty|lookup-free|moonmock`: one side alone, GraphQL with 8 in flight (`--in-flight N`
        // to change that), for a profiler.
        let only = arguments.option("--only", default: "")
        if !only.isEmpty {
            let time = await perRequest(only == "empty" ? baseline : only == "lookup-free" ? lookupFree : mocked, graphql, requests, arguments.option("--in-flight", default: 8))
            print("\(only) alone: \(String(format: "%.1f", time)) us per request")
            return 0
        }
        var times: [String: [Double]] = [:]
        for _ in 0..<rounds {
            for (name, request) in [("GET /users/:id", get), ("GraphQL GetUser", graphql)] {
                for concurrency in [1, 8] {
                    let label = "\(name) \(concurrency)"
                    // Interleave blocks of requests so that load from elsewhere on the machine hits
                    // both sides alike; each side's figure is its total time over its requests.
                    var base = 0.0, free = 0.0, mock = 0.0, spent = 0.0
                    let blocks = max(1, requests / 100)
                    for _ in 0..<blocks {
                        base += await perRequest(baseline, request, 100, concurrency)
                        mock += await perRequest(mocked, request, 100, concurrency)
                        free += await perRequest(lookupFree, request, 100, concurrency)
                        if calibrate > 0 { spent += await perRequest(busy, request, 100, concurrency) }
                    }
                    times["empty protocol, " + label, default: []].append(base / Double(blocks))
                    times["lookup-free, " + label, default: []].append(free / Double(blocks))
                    times["Moonmock, " + label, default: []].append(mock / Double(blocks))
                    times["busy protocol, " + label, default: []].append(spent / Double(blocks))
                }
            }
        }
        moonmock.engine.journal.clear()

        print("in-process: microseconds per request through URLSession (.\(kind)), median of \(rounds) rounds of \(requests);")
        print("one request at a time (latency) and 8 in flight (wall time / requests); the sides alternate every 100 requests.")
        print("'empty' is the empty protocol in the stock session; 'lookup-free' is the empty protocol in a session whose")
        print("URL cache skips the lookup as Moonmock's configuration does (so 'own' is Moonmock's own work alone)")
        var worst = 0.0, worstOwn = 0.0
        for name in ["GET /users/:id", "GraphQL GetUser"] {
            for concurrency in [1, 8] {
                let label = "\(name) \(concurrency)"
                let base = median(times["empty protocol, " + label]!), mock = median(times["Moonmock, " + label]!)
                let free = median(times["lookup-free, " + label]!)
                worst = max(worst, mock / base)
                worstOwn = max(worstOwn, mock / free)
                print(String(format: "  %-16@ %@   empty %7.1f us   lookup-free %7.1f us   Moonmock %7.1f us   ratio %.3fx   own %.3fx",
                             name as NSString, (concurrency == 1 ? "sequential " : "8 in flight") as NSString, base, free, mock,
                             mock / base, mock / free))
                if calibrate > 0 {
                    let spent = median(times["busy protocol, " + label]!)
                    print(String(format: "  %-16@ %@   empty protocol + %d us of work %7.1f us   ratio %.3fx", name as NSString,
                                 (concurrency == 1 ? "sequential " : "8 in flight") as NSString, calibrate, spent, spent / base))
                }
            }
        }
        print(String(format: "worst ratio Moonmock/empty protocol: %.3fx (target <= 1.15x) %@", worst, worst <= 1.15 ? "PASS" : "FAIL"))
        print(String(format: "worst ratio Moonmock/lookup-free empty protocol: %.3fx (Moonmock's own work, apart from the lookup its sessions skip)",
                     worstOwn))
        return 0
    }

    /// Wall time per request for `n` requests, `concurrency` of them in flight at once.
    static func perRequest(_ session: URLSession, _ request: URLRequest, _ n: Int, _ concurrency: Int) async -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        await withTaskGroup(of: Void.self) { group in
            for lane in 0..<concurrency {
                group.addTask {
                    for _ in stride(from: lane, to: n, by: concurrency) { _ = try? await session.data(for: request) }
                }
            }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1000 / Double(n)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}

/// The baseline: answers every request at once with a constant small JSON body.
class ConstantProtocol: URLProtocol {
    static let body = Data(#"{"email":"user7@example.com","id":7,"name":"User 7"}"#.utf8)

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "application/json", "Content-Length": String(Self.body.count)])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

/// A URL cache that holds nothing and answers every lookup with "nothing" from another thread,
/// without looking (what Moonmock's configuration does for the requests it answers).
final class NoLookupCache: URLCache, @unchecked Sendable {
    init() { super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: nil) }
    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        DispatchQueue.global().async { completionHandler(nil) }
    }
}

/// The empty protocol spending a fixed amount of CPU before it answers (`--calibrate`).
final class BusyProtocol: ConstantProtocol {
    nonisolated(unsafe) static var nanoseconds: UInt64 = 0

    override func startLoading() {
        let start = DispatchTime.now().uptimeNanoseconds
        while DispatchTime.now().uptimeNanoseconds - start < Self.nanoseconds {}
        super.startLoading()
    }
}
