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
