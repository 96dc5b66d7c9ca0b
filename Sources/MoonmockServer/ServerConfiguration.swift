import MoonmockCore
/// How a ``MoonmockServer`` listens and behaves.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 0          // pick a free port; read it from server.port
/// configuration.threads = 2
/// ```
public struct ServerConfiguration: Sendable {
    /// Address to bind; loopback unless told otherwise.
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks a free one.
    public var port: Int = 8080
    /// Worker threads (each serves its own connections); defaults to the number of cores.
    /// With one Lua VM (the default script load), one worker is usually fastest: a second only
    /// waits for the VM and moves its memory between cores (`moonmock serve` runs one worker
    /// per VM unless told otherwise).
    public var threads: Int = max(1, ServerConfiguration.cores)
    /// With a shared store (an engine made with one), the threads that answer requests which may
    /// wait for it, off the event loops (``Rule/mayUseStore``): as many such requests wait for
    /// the store at once, their commands sharing round trips.
    public var storeWorkers: Int = 8
    /// PEM contents (not paths) of the TLS certificate (the server's first, then any chain) and
    /// its key; both or neither. Set, the server speaks HTTPS only (TLS 1.2 and 1.3, ALPN
    /// `h2` and `http/1.1`, or only `http/1.1` without ``http2``). ``SelfSignedCertificate`` makes a pair for local use.
    public var tlsCertificatePEM: String?
    public var tlsKeyPEM: String?
    /// Request bodies beyond this many bytes get `413`.
    public var maxBodyBytes: Int = 16 << 20
    /// The most answer bytes the server holds for clients that have not read them, shared by the
    /// event loops; a large answer that would pass it gets `503` with `Retry-After: 1`.
    public var maxPendingOutput: Int = 256 << 20
    /// The script file served (`GET /__moonmock/script`, the MCP resource `moonmock://script`).
    public var scriptPath: String?
    /// MCP's streamable HTTP transport at `/__moonmock/mcp` (`moonmock serve --mcp`).
    public var mcp = false
    /// `GET /__moonmock/metrics` in Prometheus's text format (`--metrics off` turns it off).
    public var metrics = true
    /// HTTP/2 besides HTTP/1.1 (`--http2 off` refuses it): h2 by ALPN over TLS, h2c with prior
    /// knowledge or `Upgrade: h2c` on plain connections.
    public var http2 = true
    /// WebSocket handshakes may agree permessage-deflate (RFC 7692); `--ws-deflate off` refuses it.
    public var webSocketDeflate = true
    /// `Authorization: Bearer TOKEN` required for `/__moonmock/` when set (the dashboard signs in
    /// with it once and then holds a session cookie).
    public var adminToken: String?
    /// Host names the admin API answers besides the bound address and the loopback names
    /// (`localhost`, `127.0.0.1`, `::1`): any other `Host` gets `403`, which stops a DNS-rebinding
    /// page from reading the journal. `moonmock serve --admin-host NAME`.
    public var adminHosts: [String] = []
    /// Seconds an idle keep-alive connection stays open.
    public var idleTimeout: Int = 60
    /// Seconds a request head may take to arrive whole, from its first byte: past it, `408` and
    /// the connection closes (a client trickling a head byte by byte cannot hold it open).
    public var headerTimeout: Double = 30
    /// Seconds a request body may go without a byte arriving: past it, `408` and a close.
    public var bodyTimeout: Double = 30
    /// Seconds an answer may go without the client taking a byte of it: past it, the connection
    /// is dropped and the answer's memory freed (a client that never reads holds nothing).
    public var sendTimeout: Double = 60
    /// Request log lines.
    /// Cross-origin access for browser apps (`--cors`, `--cors-origin`); a script's
    /// `mock.cors{...}` takes its place while it serves.
    public var cors: CORSPolicy?
    public var log: RequestLogMode = .none
    /// Where log lines go (stdout by default).
    public var logSink: (@Sendable (String) -> Void)?
    public init() {}

    /// `true` for addresses that only this machine reaches.
    public var isLoopback: Bool {
        host == "127.0.0.1" || host == "::1" || host == "localhost" || host.hasPrefix("127.")
    }

    static var cores: Int {
        #if canImport(Glibc)
        return Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
        return 2
        #endif
    }
}

/// `--log none|compact|verbose`.
public enum RequestLogMode: String, Sendable, CaseIterable {
    case none, compact, verbose
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
