import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

let exampleScript = #"""
mock.get("/users/:id", function(req) return { id = tonumber(req.params.id), name = "User " .. req.params.id } end)
mock.graphql("GetUser", function(req) return { data = { user = { id = req.json.variables.id } } } end)
mock.post("/echo", function(req) return { body = req.body, type = req.headers["content-type"] } end)
mock.get("/reset", mock.fault("connection_reset"))
mock.get("/empty", mock.fault("empty_response"))
mock.get("/chunk", mock.fault("malformed_chunk"))
mock.get("/hang", mock.fault("timeout"))
mock.get("/slow", mock.json({ ok = true }, { delay = 3000 }))
mock.get("/quick", mock.json({ ok = true }, { delay = 50 }))
mock.get("/dribble", mock.text("abcdefghij", { fault = "dribble", bytes_per_second = 40 }))
mock.get("/moved", mock.redirect("/users/1", 301))
mock.get("/source", "from script")
"""#

/// A Moonmock serving `exampleScript`, with the environment pinned.
func makeMoonmock(_ script: String = exampleScript) throws -> Moonmock {
    let moonmock = Moonmock(environment: .fixed(now: 1_700_000_000, seed: 1))
    try moonmock.load(lua: script)
    return moonmock
}

extension URLSession {
    /// `data(for:)` returning an `HTTPURLResponse`.
    func fetch(_ url: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:],
               timeout: TimeInterval = 10) async throws -> (String, HTTPURLResponse) {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await data(for: request)
        return (String(decoding: data, as: UTF8.self), response as! HTTPURLResponse)
    }
}

/// Collects a delegate-based data task's events.
final class CollectingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var response: URLResponse?
    private var chunks = 0
    private var continuation: CheckedContinuation<(Data, URLResponse?, Int, Error?), Never>?
    private var result: (Data, URLResponse?, Int, Error?)?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { self.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { self.data.append(data); chunks += 1 }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let waiting: CheckedContinuation<(Data, URLResponse?, Int, Error?), Never>? = lock.withLock {
            let r = (data, response, chunks, error)
            result = r
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: lock.withLock { result! })
    }

    /// Waits for completion: body, response, number of data callbacks, error.
    func wait() async -> (Data, URLResponse?, Int, Error?) {
        await withCheckedContinuation { c in
            let done: (Data, URLResponse?, Int, Error?)? = lock.withLock {
                if let result { return result }
                continuation = c
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }
}

/// Keeps instances alive for the whole test run (tests that build a session in one expression).
private let kept = NSLock()
nonisolated(unsafe) private var keptInstances: [Moonmock] = []
func keep(_ m: Moonmock) -> Moonmock {
    kept.withLock { keptInstances.append(m) }
    return m
}
