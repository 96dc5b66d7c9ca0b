import Foundation
import MoonmockCore
import MoonmockServer
import Testing

/// The admin API against browsers: DNS rebinding, cross-site writes, and a dashboard that signs
/// in with the admin token.
@Suite("Admin API guards")
struct AdminGuardTests {
    /// One exchange, on a thread of its own (blocking reads stay off the pool other tests share).
    func raw(_ server: MoonmockServer, _ head: String, body: String = "") async -> String {
        let length = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
        return await onThread { RawHTTP.exchange(server, head + length + "Connection: close\r\n\r\n" + body).text }
    }

    @Test("an admin request whose Host is not this server gets 403; mocks answer any Host", arguments: Scheme.allCases)
    func hostCheck(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme) { $0.adminHosts = ["mocks.internal"] }
        defer { server.stop() }
        let rebound = await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: evil.example:\(server.port)\r\n")
        #expect(rebound.hasPrefix("HTTP/1.1 403") && rebound.contains("--admin-host evil.example"), "\(rebound)")
        for host in ["localhost:\(server.port)", "127.0.0.1:\(server.port)", "LOCALHOST", "[::1]:\(server.port)", "mocks.internal"] {
            #expect(await raw(server, "GET /__moonmock/health HTTP/1.1\r\nHost: \(host)\r\n").hasPrefix("HTTP/1.1 200"), "\(host)")
        }
        // The mocks themselves answer whatever host the client names.
        #expect(await raw(server, "GET /users/3 HTTP/1.1\r\nHost: evil.example\r\n").contains("User 3"))
    }

    @Test("a state-changing admin request from another origin gets 403; from the server's own origin, or without one, it goes through")
    func originCheck() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        for origin in ["http://evil.example", "null", "http://127.0.0.1:1", "https://\(host)"] {
            let r = await raw(server, "POST /__moonmock/reset HTTP/1.1\r\nHost: \(host)\r\nOrigin: \(origin)\r\n")
            #expect(r.hasPrefix("HTTP/1.1 403") && r.contains("own origin"), "\(origin): \(r)")
            let d = await raw(server, "DELETE /__moonmock/state HTTP/1.1\r\nHost: \(host)\r\nOrigin: \(origin)\r\n")
            #expect(d.hasPrefix("HTTP/1.1 403"), "\(origin): \(d)")
        }
        #expect(await raw(server, "POST /__moonmock/reset HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(await raw(server, "POST /__moonmock/reset HTTP/1.1\r\nHost: \(host)\r\n").hasPrefix("HTTP/1.1 200"))   // curl, scripts
        // Reads are not refused for their Origin (a page elsewhere cannot read the answer without CORS anyway).
        #expect(await raw(server, "GET /__moonmock/health HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://evil.example\r\n").hasPrefix("HTTP/1.1 200"))
    }

    @Test("with --admin-token the dashboard page loads, signs in with the token, and its session cookie opens the API")
    func dashboardSignIn() async throws {
        let server = try startServer(serverScript) { $0.adminToken = "s3cret" }
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        let page = await raw(server, "GET /__moonmock/ HTTP/1.1\r\nHost: \(host)\r\n")
        #expect(page.hasPrefix("HTTP/1.1 200") && page.contains(#"<form id="login""#) && !page.contains("s3cret"))
        #expect(await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: \(host)\r\n").hasPrefix("HTTP/1.1 401"))
        let wrong = await raw(server, "POST /__moonmock/login HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nContent-Type: application/json\r\n",
                        body: #"{"token":"guess"}"#)
        #expect(wrong.hasPrefix("HTTP/1.1 401") && !wrong.contains("Set-Cookie"))
        let login = await raw(server, "POST /__moonmock/login HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nContent-Type: application/json\r\n",
                        body: #"{"token":"s3cret"}"#)
        let cookieLine = try #require(login.components(separatedBy: "\r\n").first { $0.hasPrefix("Set-Cookie: moonmock_admin=") })
        #expect(cookieLine.contains("HttpOnly") && cookieLine.contains("SameSite=Strict") && cookieLine.contains("Path=/__moonmock"))
        let cookie = String(cookieLine.dropFirst("Set-Cookie: ".count).prefix { $0 != ";" })
        #expect(await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(await raw(server, "POST /__moonmock/reset HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\nOrigin: http://\(host)\r\n").hasPrefix("HTTP/1.1 200"))
        // A made-up session is nothing; logging out ends the real one.
        #expect(await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: \(host)\r\nCookie: moonmock_admin=00ff\r\n").hasPrefix("HTTP/1.1 401"))
        #expect(await raw(server, "POST /__moonmock/logout HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\n").hasPrefix("HTTP/1.1 401"))
        // The bearer token keeps working for scripts.
        #expect(await raw(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer s3cret\r\n").hasPrefix("HTTP/1.1 200"))
    }
}
