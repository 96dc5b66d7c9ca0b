import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMockingjay
import MoonmockTestSupport
import Testing

/// What Mockingjay's own tests check, through real sessions: `.shared`, `.default` and
/// `.ephemeral` configurations, async calls and completion handlers.
@Suite("Mockingjay kit", .serialized)
struct MockingjayBehaviourTests {
    /// A session of each kind the tests use: `.shared`, or one from `.default` / `.ephemeral`
    /// with the stubs installed.
    enum Kind: String, CaseIterable, Sendable { case shared, `default`, ephemeral }

    static func session(_ kind: Kind) -> URLSession {
        switch kind {
        case .shared: return .shared
        case .default, .ephemeral:
            let configuration: URLSessionConfiguration = kind == .default ? .default : .ephemeral
            MockingjayProtocol.install(into: configuration)
            return URLSession(configuration: configuration)
        }
    }

    static func get(_ session: URLSession, _ url: String, method: String = "GET") async throws -> (Int, Data, HTTPURLResponse) {
        let reply = try await session.reply(url, method: method)
        return (reply.status, reply.data, reply.response)
    }

    @Test("uri, http(method, uri) and everything match; the newest stub wins", .mockingjay, arguments: Kind.allCases)
    func matchers(kind: Kind) async throws {
        try await SharedSessionLock.exclusively {
            let session = Self.session(kind)
            stub(everything, http(status: 404))
            stub(uri("/{user}/{repository}"), json(["user": "Kyle"], status: 201, headers: ["X-Kit": "mockingjay"]))
            stub(http(.put, uri: "https://api.example.com/kylef/Mockingjay"), json(["description": "Kyle"]))
            let (status, data, response) = try await Self.get(session, "https://api.example.com/kylef/Mockingjay")
            #expect(status == 201)
            #expect(String(decoding: data, as: UTF8.self) == #"{"user":"Kyle"}"#)
            #expect(response.value(forHTTPHeaderField: "X-Kit") == "mockingjay")
            #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
            #expect(response.textEncodingName == "utf-8")
            let (_, put, _) = try await Self.get(session, "https://api.example.com/kylef/Mockingjay", method: "PUT")
            #expect(String(decoding: put, as: UTF8.self) == #"{"description":"Kyle"}"#)
            #expect(try await Self.get(session, "https://api.example.com/a/b/c").0 == 404)
        }
    }

    @Test("a closure over URLRequest is a matcher; builders see the request", .mockingjay)
    func closures() async throws {
        try await SharedSessionLock.exclusively {
            stub({ $0.value(forHTTPHeaderField: "Authorization") == nil }, http(401))
            stub({ $0.url?.path == "/echo" }) { request in
                let text = request.url?.query ?? ""
                return .success(HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!, .content(Data(text.utf8)))
            }
            var request = URLRequest(url: URL(string: "https://api.example.com/echo?x=1")!)
            request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
            let (data, _) = try await URLSession.shared.data(for: request)
            #expect(String(decoding: data, as: UTF8.self) == "x=1")
            #expect(try await Self.get(.shared, "https://api.example.com/other").0 == 401)
        }
    }

    @Test("failure fails the task with that error; completion handlers get it too", .mockingjay)
    func failures() async throws {
        try await SharedSessionLock.exclusively { () async throws -> Void in
            stub(everything, failure(NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotFindHost)))
            await #expect(throws: (any Error).self) { try await Self.get(.shared, "https://api.example.com/x") }
            let code: Int = await withCheckedContinuation { done in
                Self.session(.ephemeral).dataTask(with: URL(string: "https://api.example.com/y")!) { _, _, error in
                    done.resume(returning: (error as NSError?)?.code ?? 0)
                }.resume()
            }
            #expect(code == NSURLErrorCannotFindHost)
        }
    }

    @Test("jsonData, http with a download, a stream in chunks, redirect (301)", .mockingjay)
    func builders() async throws {
        try await SharedSessionLock.exclusively {
            stub(uri("/raw"), jsonData(Data(#"{"b":2,"a":1}"#.utf8)))
            stub(uri("/png"), http(200, headers: ["Content-Type": "image/png"], download: .content(Data([0x89, 0x50]))))
            stub(uri("/stream"), http(download: .streamContent(data: Data(repeating: 0x61, count: 40), inChunksOf: 20)))
            stub(uri("/old"), redirect(URL(string: "https://api.example.com/raw")!))
            #expect(String(decoding: try await Self.get(.shared, "https://api.example.com/raw").1, as: UTF8.self) == #"{"b":2,"a":1}"#)
            let (_, png, pngResponse) = try await Self.get(.shared, "https://api.example.com/png")
            #expect([UInt8](png) == [0x89, 0x50])
            #expect(pngResponse.value(forHTTPHeaderField: "Content-Type") == "image/png")
            let started = Date()
            #expect(try await Self.get(.shared, "https://api.example.com/stream").1.count == 40)
            #expect(Date().timeIntervalSince(started) >= 0.1)
            let (status, moved, response) = try await Self.get(.shared, "https://api.example.com/old")
            #expect(status == 200)
            #expect(response.url?.path == "/raw")
            #expect(!moved.isEmpty)
            #expect(MockingjayProtocol.moonmock.requests.contains { $0.status == 301 })
        }
    }

    @Test("removeStub and removeAllStubs; an unmatched request goes to the network", .mockingjay)
    func removing() async throws {
        try await SharedSessionLock.exclusively {
            let upstream = try LoopbackServer(body: "real network")
            let url = "http://127.0.0.1:\(upstream.port)/users"
            let first = stub(uri("/users"), json(["n": 1]))
            #expect(String(decoding: try await Self.get(.shared, url).1, as: UTF8.self) == #"{"n":1}"#)
            removeStub(first)
            #expect(String(decoding: try await Self.get(.shared, url).1, as: UTF8.self) == "real network")
            stub(uri("/users"), json(["n": 2]))
            removeAllStubs()
            #expect(String(decoding: try await Self.get(Self.session(.default), url).1, as: UTF8.self) == "real network")
        }
    }

    @Test("the trait removes a test's stubs when it ends")
    func traitScope() async throws {
        try await SharedSessionLock.exclusively {
            let trait = MockingjayTrait.mockingjay
            try await trait.provideScope(for: Test.current!, testCase: Test.Case.current) { () async throws in
                stub(uri("/scoped"), http(204))
                #expect(try await Self.get(.shared, "https://api.example.com/scoped").0 == 204)
            }
            #expect(MockingjayProtocol.moonmock.engine.runtimeRules.isEmpty)
        }
    }
}
