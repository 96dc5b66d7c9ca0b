import Foundation
import MoonmockCore
import MoonmockProxy

/// `moonmock health [--url URL] [--token T]`: asks a running server's `/__moonmock/health`; exit
/// 0 when it answers `"status": "ok"`, 1 otherwise (a container's HEALTHCHECK: the image has no curl).
enum Health {
    static let usage = """
    usage: moonmock health [--url URL] [--token TOKEN]

    Asks a running server how it is (GET URL/__moonmock/health, default URL
    http://127.0.0.1:8080) and prints the answer. Exits 0 when its status is "ok",
    1 when it is anything else or the server does not answer: a container's
    HEALTHCHECK. --token (or MOONMOCK_ADMIN_TOKEN) is the server's --admin-token.
    """

    static func run(_ arguments: [String]) -> Int32 {
        var url = "http://127.0.0.1:8080"
        var token = ProcessInfo.processInfo.environment["MOONMOCK_ADMIN_TOKEN"]
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "-h", "--help": print(usage); return 0
            case "--url", "--token":
                guard i + 1 < arguments.count else { return MoonmockCLI.usageError("\(arguments[i]) needs a value", usage) }
                if arguments[i] == "--url" { url = arguments[i + 1] } else { token = arguments[i + 1] }
                i += 2
            default:
                return MoonmockCLI.usageError("unexpected argument '\(arguments[i])'", usage)
            }
        }
        while url.hasSuffix("/") { url.removeLast() }
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else { return MoonmockCLI.usageError("--url must start with http:// or https://", usage) }
        var headers = HTTPHeaders()
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let request = MockRequest(method: "GET", url: url + "/__moonmock/health", headers: headers)
        let answer = Upstream.shared.fetch(request, to: ProxyTarget(base: url, timeoutMilliseconds: 3000))
        let text = String(decoding: answer.body, as: UTF8.self)
        let json = try? JSONValue(parsing: answer.body)
        guard answer.status == 200, json?["status"]?.stringValue == "ok" else {
            // The transport's own 502 (it names the upstream): nothing answered at all.
            let unreachable = answer.status == 502 && json?["upstream"] != nil
            let why = unreachable ? "no answer (\(json?["error"]?.stringValue ?? ""))" : "HTTP \(answer.status) \(text)"
            MoonmockCLI.printError("moonmock: \(url) is not healthy: \(why)")
            return 1
        }
        print(text)
        return 0
    }
}
