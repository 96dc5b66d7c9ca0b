import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockTestSupport
import Testing

@Suite("URLSession.shared", .serialized)
struct GlobalInstallTests {
    @Test("installGlobally answers URLSession.shared until uninstallGlobally")
    func shared() async throws {
        try await SharedSessionLock.exclusively { try await Self.sharedSession() }
    }

    static func sharedSession() async throws {
        let upstream = try LoopbackServer(body: "real network")
        let moonmock = try makeMoonmock()
        moonmock.installGlobally()
        #expect(moonmock.isInstalledGlobally)
        let (body, _) = try await URLSession.shared.fetch("http://127.0.0.1:\(upstream.port)/users/4")
        #expect(body == #"{"id":4,"name":"User 4"}"#)

        // A session configured for another instance is still answered by that instance only.
        let other = Moonmock()
        try other.load(lua: #"mock.get("/users/:id", "other")"#)
        #expect(try await other.makeSession().fetch("http://127.0.0.1:\(upstream.port)/users/4").0 == "other")

        moonmock.uninstallGlobally()
        #expect(!moonmock.isInstalledGlobally)
        let (real, _) = try await URLSession.shared.fetch("http://127.0.0.1:\(upstream.port)/users/4")
        #expect(real == "real network")
    }
}
