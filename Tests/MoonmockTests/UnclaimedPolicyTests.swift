import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockTestSupport
import Testing

/// The next protocol in a configuration: answers every request with the text "next protocol".
final class NextProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 299, httpVersion: "HTTP/1.1", headerFields: ["X-By": "next"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("next protocol".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

@Suite("Unmatched requests left unclaimed")
struct UnclaimedPolicyTests {
    @Test("leaveUnclaimed: canInit is false where no rule answers, so the next protocol gets the request")
    func nextProtocol() async throws {
        let moonmock = try makeMoonmock()
        moonmock.unmatchedPolicy = .leaveUnclaimed
        let configuration = moonmock.makeConfiguration()
        configuration.protocolClasses = [moonmock.protocolClass, NextProtocol.self] + (configuration.protocolClasses ?? []).dropFirst()
        let session = URLSession(configuration: configuration)
        let (mocked, _) = try await session.fetch("https://api.example.com/users/3")
        #expect(mocked == #"{"id":3,"name":"User 3"}"#)
        let (other, response) = try await session.fetch("https://api.example.com/nothing/here")
        #expect(other == "next protocol")
        #expect(response.statusCode == 299)
        // Moonmock never saw it.
        #expect(moonmock.requests.count == 1)
        #expect(moonmock.unmatchedRequests.isEmpty)
    }

    @Test("leaveUnclaimed: without another protocol the request reaches the network; a spent times budget counts")
    func network() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let moonmock = Moonmock()
        try moonmock.load(lua: #"""
            mock.get("/once", "mocked", { times = 1 })
            mock.route { method = "GET", path = "/conditional", when = function(req) return req.query.mock == "1" end, respond = "mocked" }
            """#)
        moonmock.unmatchedPolicy = .leaveUnclaimed
        let session = moonmock.makeSession()
        let base = "http://127.0.0.1:\(upstream.port)"
        #expect(try await session.fetch(base + "/once").0 == "mocked")
        #expect(try await session.fetch(base + "/once").0 == "real network")
        #expect(try await session.fetch(base + "/conditional?mock=1").0 == "mocked")
        #expect(try await session.fetch(base + "/conditional?mock=0").0 == "real network")
        #expect(moonmock.requests.count == 2)
    }

    @Test("leaveUnclaimed decides on the body too: a JSON condition sees the request's body")
    func bodyCondition() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let moonmock = Moonmock()
        try moonmock.load(lua: #"mock.route { method = "POST", path = "/graphql", json = { operationName = "GetUser" }, respond = "mocked" }"#)
        moonmock.unmatchedPolicy = .leaveUnclaimed
        let session = moonmock.makeSession()
        let url = "http://127.0.0.1:\(upstream.port)/graphql"
        #expect(try await session.fetch(url, method: "POST", body: Data(#"{"operationName":"GetUser"}"#.utf8)).0 == "mocked")
        #expect(try await session.fetch(url, method: "POST", body: Data(#"{"operationName":"Other"}"#.utf8)).0 == "real network")
    }

    @Test("passThrough claims the request and sends it on itself: it is in the journal")
    func ownSession() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let moonmock = Moonmock()
        moonmock.unmatchedPolicy = .passThrough
        let configuration = moonmock.makeConfiguration()
        configuration.protocolClasses = [moonmock.protocolClass, NextProtocol.self]
        let (body, _) = try await URLSession(configuration: configuration).fetch("http://127.0.0.1:\(upstream.port)/x")
        #expect(body == "real network")
        #expect(moonmock.unmatchedRequests.count == 1)
    }
}
