import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

/// `URLSessionWebSocketTask` against `mock.websocket`: through the server (the in-process door
/// answers a WebSocket route with 426, since a URLProtocol cannot upgrade a connection).
@Suite("URLSessionWebSocketTask")
struct WebSocketTaskTests {
    static let script = #"""
    mock.websocket("/echo", { on_message = function(ws, msg) ws:send("echo: " .. (msg.text or "")) end })
    """#

    @Test("echoes through the server where libcurl has WebSockets; on Linux builds without them the task says so")
    func echo() async throws {
        try await Served.serving(Self.script, door: .socket) { served in
            let url = URL(string: served.baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/echo")!
            let task = URLSession(configuration: .ephemeral).webSocketTask(with: url)
            task.resume()
            defer { task.cancel(with: .normalClosure, reason: nil) }
            do {
                try await task.send(.string("hi"))
                let reply = try await task.receive()
                guard case .string(let text) = reply else { Issue.record("expected text, got \(reply)"); return }
                #expect(text == "echo: hi")
            } catch {
                // swift-corelibs-foundation hands WebSockets to libcurl; Debian's libcurl is built
                // without them (docs/swift.md). Anything else is a failure.
                #if canImport(FoundationNetworking)
                #expect("\(error)".contains("WebSockets not supported by libcurl"), "\(error)")
                #else
                Issue.record("\(error)")
                #endif
            }
        }
    }

    @Test("in-process, a WebSocket route answers a plain request with 426")
    func inProcess() async throws {
        try await Served.serving(Self.script, door: .inProcess) { served in
            let reply = try await served.fetch("/echo")
            #expect(reply.status == 426)
            #expect(reply.headers["upgrade"] == "websocket")
        }
    }
}
