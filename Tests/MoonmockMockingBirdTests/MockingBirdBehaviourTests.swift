import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMockingBird
import MoonmockTestSupport
import Testing

/// What MockingBird's own tests check, through real sessions: bundle entries and their query
/// parameters, the network for the rest, handle-all, no bundle, switching bundles.
@Suite("MockingBird kit", .serialized)
struct MockingBirdBehaviourTests {
    static let bundles = Bundle.module.resourcePath! + "/bundles"

    static func session(_ ephemeral: Bool = false) -> URLSession {
        let configuration: URLSessionConfiguration = ephemeral ? .ephemeral : .default
        MockingBird.register(inConfig: configuration)
        return URLSession(configuration: configuration)
    }

    static func get(_ session: URLSession, _ url: String, method: String = "GET") async throws -> (Int, String, HTTPURLResponse) {
        let reply = try await session.reply(url, method: method)
        return (reply.status, reply.text, reply.response)
    }

    /// Each test starts from the httpbin bundle, handle-all off.
    init() throws {
        MockingBird.handleAllRequests = false
        try MockingBird.setMockBundle(withPath: Self.bundles + "/httpbin")
    }

    @Test("entries answer with their file, code, headers and mime_type; query parameters as declared")
    func entries() async throws {
        let session = Self.session()
        let (status, body, response) = try await Self.get(session, "https://httpbin.org/ip")
        #expect(status == 200 && body.contains("127.0.0.1"))
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(try await Self.get(session, "http://httpbin.org/get?arg1=test&arg2=test").0 == 200)
        #expect(try await Self.get(session, "http://httpbin.org/get?arg1=foobar").0 == 200)
        let (created, _, posted) = try await Self.get(session, "http://httpbin.org/post", method: "POST")
        #expect(created == 201 && posted.value(forHTTPHeaderField: "X-Mocked") == "yes")
        let (_, _, image) = try await Self.get(Self.session(true), "http://httpbin.org/image")
        #expect(image.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
    }

    @Test("what the bundle lacks goes to the network; handleAllRequests answers 501, switchable at any time")
    func unmatched() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let session = Self.session()
        let url = "http://127.0.0.1:\(upstream.port)/html"
        #expect(try await Self.get(session, url).1 == "real network")
        MockingBird.handleAllRequests = true
        #expect(try await Self.get(session, url).0 == 501)
        #expect(try await Self.get(session, "http://httpbin.org/get?other=foobar").0 == 501)   // an undeclared parameter
        #expect(try await Self.get(session, "https://httpbin.org/ip").0 == 200)
        MockingBird.handleAllRequests = false
        #expect(try await Self.get(session, url).1 == "real network")
    }

    @Test("no bundle (nil), not handling all: every request goes to the network; another bundle replaces the whole set")
    func switching() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let session = Self.session()
        try MockingBird.setMockBundle(withPath: nil)
        #expect(try await Self.get(session, "http://127.0.0.1:\(upstream.port)/ip").1 == "real network")
        MockingBird.handleAllRequests = true
        try MockingBird.setMockBundle(withPath: Self.bundles + "/empty")
        #expect(try await Self.get(session, "http://httpbin.org/ip").0 == 204)
        #expect(try await Self.get(session, "http://httpbin.org/get?arg1=x").0 == 501)
    }

    @Test("register(inSession:) reaches a session made before; a bad folder throws MockingBird's error with the reason")
    func registerAndErrors() async throws {
        let session = URLSession(configuration: .ephemeral)
        MockingBird.register(inSession: session)
        #expect(try await Self.get(session, "http://httpbin.org/ip").0 == 200)
        #expect(throws: MockingBird.MBError.mockBundleNotFound) { try MockingBird.setMockBundle(withPath: Self.bundles + "/missing") }
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("mockingbird-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: broken) }
        try Data("{ not json".utf8).write(to: broken.appendingPathComponent("bundle.json"))
        #expect(throws: MockingBird.MBError.invalidBundleDescriptionFile) { try MockingBird.setMockBundle(withPath: broken.path) }
        #expect(MockingBird.lastError?.contains("bundle.json") == true)
        // The bundle served before stays.
        #expect(try await Self.get(session, "http://httpbin.org/ip").0 == 200)
    }

    @Test("no bundle and handleAllRequests: every request is answered 501, as MockingBird does")
    func noBundleHandlesAll() async throws {
        let session = Self.session(true)
        try MockingBird.setMockBundle(withPath: nil)
        MockingBird.handleAllRequests = true
        defer { MockingBird.handleAllRequests = false }
        #expect(try await Self.get(session, "http://httpbin.org/ip").0 == 501)
        #expect(try await Self.get(session, "https://api.example.com/anything?x=1", method: "POST").0 == 501)
    }
}
