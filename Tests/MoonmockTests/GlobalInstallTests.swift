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

    @Test("on Linux a global install reaches URLSession.shared and sessions without protocol classes, not .default or .ephemeral ones")
    func reach() async throws {
        try await SharedSessionLock.exclusively {
            let upstream = try LoopbackServer(body: "real network")
            let moonmock = try makeMoonmock()
            moonmock.installGlobally()
            defer { moonmock.uninstallGlobally() }
            let url = "http://127.0.0.1:\(upstream.port)/users/4"
            let mocked = #"{"id":4,"name":"User 4"}"#
            #expect(try await URLSession.shared.fetch(url).0 == mocked)
            // swift-corelibs-foundation asks a configuration's own classes first, and .default and
            // .ephemeral list its HTTP loader, which takes every http(s) request: the registered
            // class is asked only when none of them does (or the list is nil). docs/swift.md says so.
            #if canImport(FoundationNetworking)
            #expect(try await URLSession(configuration: .default).fetch(url).0 == "real network")
            #expect(try await URLSession(configuration: .ephemeral).fetch(url).0 == "real network")
            let bare = URLSessionConfiguration.ephemeral
            bare.protocolClasses = nil
            #expect(try await URLSession(configuration: bare).fetch(url).0 == mocked)
            #endif
            // The way to reach any session: install the instance into its configuration.
            let configuration = URLSessionConfiguration.default
            moonmock.install(into: configuration)
            #expect(try await URLSession(configuration: configuration).fetch(url).0 == mocked)
        }
    }
}
