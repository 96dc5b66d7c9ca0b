import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

@Suite("In-process interception")
struct InterceptionTests {
    @Test("script rules answer sessions built from .default and .ephemeral configurations")
    func configurations() async throws {
        let moonmock = try makeMoonmock()
        for base in [URLSessionConfiguration.default, .ephemeral] {
            let session = URLSession(configuration: moonmock.makeConfiguration(base))
            let (body, response) = try await session.fetch("https://api.example.com/users/7")
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
            #expect(body == #"{"id":7,"name":"User 7"}"#)
        }
        let configuration = URLSessionConfiguration.default
        moonmock.install(into: configuration)
        moonmock.install(into: configuration)   // idempotent
        #expect(configuration.protocolClasses?.filter { $0 is MoonmockURLProtocol.Type }.count == 1)
    }

    @Test("answers carry a Date field from the real clock, as the server's do")
    func dateField() async throws {
        let moonmock = keep(Moonmock())
        try moonmock.load(lua: #"mock.get("/a", "x")"#)
        let before = Int(Date().timeIntervalSince1970)
        let (_, response) = try await moonmock.makeSession().fetch("http://x.test/a")
        let after = Int(Date().timeIntervalSince1970)
        let dates = Set((before...after).map(HTTPDateFormat.imfFixdate))
        #expect(dates.contains(response.value(forHTTPHeaderField: "Date") ?? ""), "\(response.allHeaderFields)")
    }

    @Test("completion-handler tasks")
    func completionHandler() async throws {
        let session = try keep(makeMoonmock()).makeSession()
        let (body, status): (String, Int) = await withCheckedContinuation { c in
            session.dataTask(with: URL(string: "http://x.test/users/3")!) { data, response, _ in
                c.resume(returning: (String(decoding: data ?? Data(), as: UTF8.self), (response as? HTTPURLResponse)?.statusCode ?? 0))
            }.resume()
        }
        #expect(status == 200 && body == #"{"id":3,"name":"User 3"}"#)
    }

    @Test("delegate-based tasks get the response, the data and completion")
    func delegateTasks() async throws {
        let moonmock = try makeMoonmock()
        let delegate = CollectingDelegate()
        let session = moonmock.makeSession(delegate: delegate)
        session.dataTask(with: URL(string: "http://x.test/users/5")!).resume()
        let (data, response, _, error) = await delegate.wait()
        #expect(error == nil)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":5,"name":"User 5"}"#)
    }

    @Test("request bodies and headers reach the script; GraphQL routes by operationName")
    func bodies() async throws {
        let session = try keep(makeMoonmock()).makeSession()
        let (echo, _) = try await session.fetch("http://x.test/echo", method: "POST", body: Data("a\u{0}b".utf8),
                                                headers: ["Content-Type": "application/octet-stream"])
        #expect(echo == #"{"body":"a\u0000b","type":"application/octet-stream"}"#)
        let (gql, _) = try await session.fetch("http://x.test/graphql", method: "POST",
                                               body: Data(#"{"operationName":"GetUser","variables":{"id":"9"}}"#.utf8))
        #expect(gql == #"{"data":{"user":{"id":"9"}}}"#)
    }

    @Test("a body in httpBodyStream is read too")
    func bodyStream() async throws {
        let session = try keep(makeMoonmock()).makeSession()
        var request = URLRequest(url: URL(string: "http://x.test/echo")!)
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("streamed".utf8))
        let (data, _) = try await session.data(for: request)
        #expect(String(decoding: data, as: UTF8.self).contains(#""body":"streamed""#))
    }

    @Test("faults become URLErrors", arguments: [
        ("/reset", URLError.Code.networkConnectionLost), ("/empty", .badServerResponse), ("/chunk", .badServerResponse),
        ("/hang", .timedOut),
    ])
    func faults(_ path: String, _ code: URLError.Code) async throws {
        let session = try keep(makeMoonmock()).makeSession()
        let started = Date()
        let error = await #expect(throws: URLError.self) { try await session.fetch("http://x.test" + path, timeout: 0.3) }
        #expect(error?.code == code)
        // Well before URLSession's default 60 s: the fault, or the 0.3 s timeout, ends the task. (The
        // bound is loose: the suite's synchronous CLI tests can hold the cooperative pool for
        // seconds. Sanitizer runs are slower still: scripts/test sets the scale.)
        #expect(Date().timeIntervalSince(started) < 15 * (Double(ProcessInfo.processInfo.environment["MOONMOCK_TEST_TIME_SCALE"] ?? "") ?? 1))
    }

    @Test("a dribbled body arrives in pieces over time")
    func dribble() async throws {
        let moonmock = try makeMoonmock()
        let delegate = CollectingDelegate()
        let started = Date()
        moonmock.makeSession(delegate: delegate).dataTask(with: URL(string: "http://x.test/dribble")!).resume()
        let (data, _, chunks, error) = await delegate.wait()
        #expect(error == nil)
        #expect(String(decoding: data, as: UTF8.self) == "abcdefghij")
        #expect(chunks >= 3)
        #expect(Date().timeIntervalSince(started) >= 0.2)
    }

    @Test("a dribbled body arrives whole through async data(for:) and a completion handler")
    func dribbleWhole() async throws {
        let moonmock = try keep(makeMoonmock())
        let session = moonmock.makeSession()
        let started = Date()
        let (data, _) = try await session.data(from: URL(string: "http://x.test/dribble")!)
        #expect(String(decoding: data, as: UTF8.self) == "abcdefghij")
        #expect(Date().timeIntervalSince(started) >= 0.2)   // as slow as the slices: 10 bytes at 40 bytes/s
        let viaHandler: Data? = await withCheckedContinuation { continuation in
            session.dataTask(with: URL(string: "http://x.test/dribble")!) { data, _, _ in continuation.resume(returning: data) }.resume()
        }
        #expect(viaHandler.map { String(decoding: $0, as: UTF8.self) } == "abcdefghij")
    }

    @Test("delays wait, and a cancelled task stops waiting at once")
    func delays() async throws {
        let moonmock = try keep(makeMoonmock())
        moonmock.stub(.path("/very-slow"), .text("late").delayed(by: 30))
        let session = moonmock.makeSession()
        let started = Date()
        _ = try await session.fetch("http://x.test/quick")
        #expect(Date().timeIntervalSince(started) >= 0.05)

        let cancelStart = Date()
        let task = Task { try await session.fetch("http://x.test/very-slow", timeout: 60) }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        let error = await #expect(throws: (any Error).self) { try await task.value }
        // Long before the 30 s delay ends (a loaded two-core machine took up to 2.7 s to run the
        // cancellation, so the bound leaves room; sanitizer runs scale it).
        #expect(Date().timeIntervalSince(cancelStart) < 10 * (Double(ProcessInfo.processInfo.environment["MOONMOCK_TEST_TIME_SCALE"] ?? "") ?? 1))
        #expect((error as? URLError)?.code == .cancelled || error is CancellationError)
    }

    @Test("short delays under load: every response arrives, whole and right")
    func shortDelaysUnderLoad() async throws {
        // Delayed answers are delivered later, from a timer: through the task's own queue, or a
        // delivery racing URLSession's bookkeeping of new tasks crashes the process.
        let moonmock = try keep(makeMoonmock("""
        mock.get("/d/:n", function(req) return mock.json({ n = tonumber(req.params.n) }, { delay = 1 }) end)
        """))
        let session = moonmock.makeSession()
        let count = 2000
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for lane in 0..<12 {
                group.addTask {
                    var right = 0
                    for n in stride(from: lane, to: count, by: 12) {
                        let (text, response) = try await session.fetch("http://x.test/d/\(n)")
                        if response.statusCode == 200, text == #"{"n":\#(n)}"# { right += 1 }
                    }
                    return right
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answers == count)
    }

    @Test("a request runs its handler once, and a task cancelled before it was resumed never reaches the engine")
    func handlerRunsOncePerSentRequest() async throws {
        let moonmock = try keep(makeMoonmock("""
        mock.get("/count", function() return { n = mock.state:incr("hits", 1, 0) } end)
        """))
        let session = moonmock.makeSession()
        for n in 1...3 {
            let (body, _) = try await session.fetch("http://x.test/count")
            #expect(body == #"{"n":\#(n)}"#)
        }
        // Cancelled while still suspended: URLSession makes a protocol object for it, but the
        // request was never sent, so no handler may run and the journal must not show it.
        let error: (any Error)? = await withCheckedContinuation { c in
            let task = session.dataTask(with: URL(string: "http://x.test/count")!) { _, _, error in c.resume(returning: error) }
            task.cancel()
        }
        #expect((error as? URLError)?.code == .cancelled)
        #expect(moonmock.requests.count == 3)
        let (body, _) = try await session.fetch("http://x.test/count")
        #expect(body == #"{"n":4}"#)
    }

    @Test("HEAD is answered by the GET rule: status and headers, the GET body's length, no body")
    func headRequests() async throws {
        let moonmock = try keep(makeMoonmock())
        let session = moonmock.makeSession()
        let (getBody, _) = try await session.fetch("http://x.test/users/7")
        let (body, response) = try await session.fetch("http://x.test/users/7", method: "HEAD")
        #expect(response.statusCode == 200)
        #expect(body.isEmpty)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == String(getBody.utf8.count))
        #expect(moonmock.requests.last?.method == "HEAD")
    }

    @Test("redirects are followed as over the network: the final response, both requests journaled")
    func redirects() async throws {
        let moonmock = keep(try makeMoonmock())
        let (body, response) = try await moonmock.makeSession().fetch("http://x.test/moved")
        #expect(response.statusCode == 200 && body == #"{"id":1,"name":"User 1"}"#)
        #expect(response.url?.absoluteString == "http://x.test/users/1")
        #expect(moonmock.requests.map(\.path) == ["/moved", "/users/1"])
    }

    @Test("a redirect after a POST is a GET; 307 keeps the method; a loop fails after 20 redirects")
    func redirectRules() async throws {
        let moonmock = keep(Moonmock())
        try moonmock.load(lua: #"""
        mock.post("/form", mock.redirect("/done", 302))
        mock.post("/keep", mock.redirect("/done", 307))
        mock.any("/done", function(req) return { method = req.method, body = req.body } end)
        mock.get("/loop", mock.redirect("/loop", 302))
        """#)
        let session = moonmock.makeSession()
        let (form, _) = try await session.fetch("http://x.test/form", method: "POST", body: Data("a=1".utf8))
        #expect(form == #"{"body":"","method":"GET"}"#)
        let (keep, _) = try await session.fetch("http://x.test/keep", method: "POST", body: Data("a=1".utf8))
        #expect(keep == #"{"body":"a=1","method":"POST"}"#)
        let loop = await #expect(throws: URLError.self) { try await session.fetch("http://x.test/loop") }
        #expect(loop?.code == .httpTooManyRedirects)
        #expect(moonmock.requests.filter { $0.path == "/loop" }.count == 21)
    }

    @Test("two instances side by side never see each other's rules or journal")
    func isolation() async throws {
        let a = Moonmock(), b = Moonmock()
        try a.load(lua: #"mock.get("/who", "a")"#)
        try b.load(lua: #"mock.get("/who", "b")"#)
        let sa = a.makeSession(), sb = b.makeSession()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                group.addTask {
                    let (body, _) = try await (i % 2 == 0 ? sa : sb).fetch("http://x.test/who")
                    #expect(body == (i % 2 == 0 ? "a" : "b"))
                }
            }
            try await group.waitForAll()
        }
        #expect(a.requests.count == 10 && b.requests.count == 10)
    }

    @Test("an instance that is gone leaves nothing behind; its old sessions fail clearly instead of going online")
    func deinitUnregisters() async throws {
        var moonmock: Moonmock? = try makeMoonmock()
        let session = moonmock!.makeSession()
        weak let weakRef = moonmock
        moonmock = nil
        #expect(weakRef == nil)
        let error = await #expect(throws: MoonmockError.self) { try await session.fetch("http://x.test/users/1") }
        #expect(error?.description.contains("no longer exists") == true)
    }
}
