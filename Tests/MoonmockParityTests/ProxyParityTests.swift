import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

@Suite("mock.proxy through both doors")
struct ProxyParityTests {
    static let upstreamScript = #"""
    mock.any("/echo/*rest", function(req)
      return { method = req.method, path = req.path, q = req.query.q, added = req.headers["x-added"], body = req.body }
    end)
    mock.get("/teapot", mock.status(418, "short and stout", { headers = { ["X-Up"] = "yes" } }))
    """#

    @Test("the upstream's answer, the same through each door; an unreachable upstream fails as each door fails", arguments: Door.allCases)
    func proxy(door: Door) async throws {
        let upstream = try Served(Self.upstreamScript, door: .socket)
        defer { upstream.stop() }
        let base = upstream.baseURL
        let served = try Served("""
            mock.any('/echo/*rest', mock.proxy('\(base)', { headers = { ['X-Added'] = 'yes' } }))
            mock.get('/teapot', mock.proxy('\(base)'))
            mock.get('/down', mock.proxy('http://127.0.0.1:1', { timeout = 2000 }))
            """, door: door)
        defer { served.stop() }
        let echo = try await served.fetch("/echo/a?q=1", method: "POST", body: "payload")
        #expect(echo.status == 200)
        #expect(echo.body == #"{"added":"yes","body":"payload","method":"POST","path":"/echo/a","q":"1"}"#)
        let teapot = try await served.fetch("/teapot")
        #expect(teapot.status == 418 && teapot.body == "short and stout")
        // The journal shows the upstream's status, not the rule's.
        #expect(served.moonmock.requests.last { $0.path == "/teapot" }?.status == 418)
        if door == .socket {
            let down = try await served.fetch("/down")
            #expect(down.status == 502 && down.body.contains("upstream http://127.0.0.1:1"))
        } else {
            await #expect(throws: URLError.self) { _ = try await served.fetch("/down") }
        }
    }
}

@Suite("mock.proxy to an HTTPS upstream")
struct ProxyTLSTests {
    @Test("an upstream certificate nobody trusts is refused, unless insecure; the same through each door", arguments: Door.allCases)
    func insecure(door: Door) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-proxy-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = try SelfSignedCertificate.load(directory: folder)   // a local CA of its own: trusted by no one
        let upstreamEngine = Engine()
        try upstreamEngine.loadScript(source: #"mock.get("/*rest", "over TLS")"#)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.tlsCertificatePEM = certificate.certificatePEM
        configuration.tlsKeyPEM = certificate.keyPEM
        let upstream = MoonmockServer(engine: upstreamEngine, configuration: configuration)
        try upstream.start()
        defer { upstream.stop(drainSeconds: 0) }
        let base = "https://127.0.0.1:\(upstream.port)"
        let served = try Served("""
            mock.get('/checked', mock.proxy('\(base)/secure', { timeout = 5000 }))
            mock.get('/unchecked', mock.proxy('\(base)/secure', { insecure = true, timeout = 5000 }))
            """, door: door)
        defer { served.stop() }
        let unchecked = try await served.fetch("/unchecked")
        #expect(unchecked.status == 200 && unchecked.body == "over TLS")
        if door == .socket {
            let checked = try await served.fetch("/checked")
            #expect(checked.status == 502 && checked.body.contains("certificate"), "\(checked.body)")
        } else {
            await #expect(throws: (any Error).self) { _ = try await served.fetch("/checked") }
        }
    }
}
