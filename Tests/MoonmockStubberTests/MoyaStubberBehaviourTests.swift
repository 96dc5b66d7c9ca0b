import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockStubber
import MoonmockTestSupport
import Testing

/// What moya-stubber's own tests check, through real sessions: the endpoints and their stubs
/// in order, activating by stub or by name, deactivating, a new bundle clearing the choices,
/// the timeout stub, the delay.
@Suite("moya-stubber kit")
struct MoyaStubberBehaviourTests {
    static let stubs = Bundle(url: Bundle.module.resourceURL!.appendingPathComponent("Stubs"))!
    static let endpoints = ["getUser": "GET /users/:id", "listUsers": "GET /users"]

    /// A stubber of its own, and a session routed to it.
    static func stubber() throws -> (MoyaStubber, URLSession) {
        let stubber = try MoyaStubber(stubsBundle: stubs, endpoints: endpoints)
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 1
        stubber.install(into: configuration)
        return (stubber, URLSession(configuration: configuration))
    }

    static func get(_ session: URLSession, _ url: String) async throws -> (Int, String) {
        let (data, response) = try await session.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test("endpoints list their stubs as moya-stubber does: the root's (G:), the timeout, then their own, with display names and status codes")
    func listing() throws {
        let (stubber, _) = try Self.stubber()
        let getUser = try #require(stubber.stubbableEndpoints.first { $0.name == "getUser" })
        #expect(getUser.availableStubs.map(\.displayName) == ["G: serverError 500 (json)", "Timeout", "missing 404 (json)", "ok 200 (json)"])
        #expect(getUser.availableStubs.map(\.statusCode) == [500, nil, 404, 200])
        #expect(getUser.availableStubs.map(\.isGeneric) == [true, true, false, false])
        let list = try #require(stubber.stubbableEndpoints.first { $0.name == "listUsers" })
        #expect(list.availableStubs.map(\.fileName) == ["serverError.500.json", nil, "legacy.200.xml", "ok.200.json"])
        #expect(stubber.stubbableEndpoints.map(\.name) == ["getUser", "listUsers"])
    }

    @Test("activate by stub or by name answers with it; nil and deactivate leave the endpoint to the network")
    func activation() async throws {
        let (stubber, session) = try Self.stubber()
        let upstream = try LoopbackServer(body: "real network")
        let base = "http://127.0.0.1:\(upstream.port)"
        #expect(try await Self.get(session, base + "/users/1").1 == "real network")
        try stubber.activate(stubNamed: "missing.404.json", forEndpoint: "getUser")
        #expect(try await Self.get(session, base + "/users/1").0 == 404)
        #expect(stubber.activeStub(forEndpointName: "getUser")?.fileName == "missing.404.json")
        let generic = try #require(stubber.stubbableEndpoints.first?.availableStubs[0])
        stubber.activate(stub: generic, forEndpoint: "getUser")
        #expect(try await Self.get(session, base + "/users/1").0 == 500)
        stubber.activate(stub: nil, forEndpoint: "getUser")
        #expect(stubber.activeStub(forEndpointName: "getUser") == nil)
        try stubber.activate(stubNamed: "ok.200.json", forEndpointNamed: "listUsers")
        #expect(try await Self.get(session, base + "/users").1.contains(#""id": 2"#))
        stubber.deactivateStub(forEndpointNamed: "listUsers")
        #expect(try await Self.get(session, base + "/users").1 == "real network")
        #expect(throws: (any Error).self) { try stubber.activate(stubNamed: "nope.200.json", forEndpoint: "getUser") }
    }

    @Test("setting a bundle again clears every active stub; the delay applies to each answer")
    func resetAndDelay() async throws {
        let (stubber, session) = try Self.stubber()
        try stubber.activate(stubNamed: "ok.200.json", forEndpoint: "getUser")
        stubber.delay = 0.3
        let started = Date()
        #expect(try await Self.get(session, "https://api.example.com/users/9").0 == 200)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        try stubber.setStubsBundle(Self.stubs, endpoints: Self.endpoints)
        #expect(stubber.activeStub(forEndpointName: "getUser") == nil)
    }

    @Test("the timeout stub fails the request with a timeout")
    func timeout() async throws {
        let (stubber, session) = try Self.stubber()
        stubber.activate(stub: .timeoutError, forEndpoint: "getUser")
        do {
            _ = try await Self.get(session, "https://api.example.com/users/1")
            Issue.record("expected a timeout")
        } catch let error as URLError {
            #expect(error.code == .timedOut)
        }
    }
}

@Suite("moya-stubber kit: the README's single-argument bundle")
struct MoyaStubberBundleTests {
    @Test("setStubsBundle(bundle) finds the endpoints from the folders; the active stub is the endpoint's sample response")
    func discovered() throws {
        let stubber = MoyaStubber()
        try stubber.setStubsBundle(MoyaStubberBehaviourTests.stubs)
        #expect(stubber.stubbableEndpoints.map(\.name) == ["getUser", "listUsers"])
        #expect(stubber.stubbableEndpoints.first?.availableStubs.map(\.displayName) == ["G: serverError 500 (json)", "Timeout", "missing 404 (json)", "ok 200 (json)"])
        #expect(stubber.sampleResponse(forEndpointNamed: "getUser") == nil)
        try stubber.activate(stubNamed: "missing.404.json", forEndpointNamed: "getUser")
        let sample = try #require(stubber.sampleResponse(forEndpointNamed: "getUser"))
        #expect(sample.statusCode == 404 && !sample.data.isEmpty)
        try stubber.activate(stubNamed: "timeout", forEndpointNamed: "getUser")
        #expect(stubber.sampleResponse(forEndpointNamed: "getUser") == nil)
        let seeded = try MoyaStubber(stubsBundle: MoyaStubberBehaviourTests.stubs)
        #expect(seeded.stubbableEndpoints.count == 2)
    }
}
