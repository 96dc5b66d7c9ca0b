import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockServer

/// `moonmock mcp --url URL [--token T]`: MCP over stdio (one JSON-RPC message per line) for a
/// coding agent, its tools calling the admin API of the server running at URL.
enum MCPCommand {
    static let usage = """
    usage: moonmock mcp --url URL [--token T]

    Speaks MCP (the Model Context Protocol) on standard input and output, one JSON-RPC message
    per line, for a coding agent: tools to list, add and remove rules, list and verify requests,
    read and set state, switch variants, reset, reload, record, and check a script; resources:
    the script and the language reference. The tools drive the server at URL (started with
    moonmock serve); moonmock serve --mcp answers the same over HTTP at /__moonmock/mcp.

    options:
      --url URL              the running server: http://127.0.0.1:8080
      --token T              its --admin-token
      -h, --help             show this help
    """

    static func run(_ arguments: [String]) -> Int32 {
        var url: String?
        var token: String?
        let args = ArgumentReader(arguments)
        do {
            while let arg = args.next() {
                switch arg {
                case "-h", "--help": print(usage); return 0
                case "--url": url = try args.value(arg)
                case "--token": token = try args.value(arg)
                default:
                    if arg.hasPrefix("-") { throw UsageError(MoonmockCLI.unknownOption(arg, usage: usage)) }
                    throw UsageError("unexpected argument '\(arg)'")
                }
            }
            guard let given = url else { throw UsageError("missing --url URL (the server moonmock serve runs)") }
            guard given.hasPrefix("http://") || given.hasPrefix("https://"), URL(string: given) != nil else {
                throw UsageError("--url must be an http:// or https:// URL, got '\(given)'")
            }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, usage)
        } catch {
            return 1
        }
        var base = url!
        while base.hasSuffix("/") { base.removeLast() }
        let mcp = MCPServer(admin: { [base, token] method, path, body in try call(base, token, method, path, body) })
        while let line = readLine(strippingNewline: true) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let answer: JSONValue?
            do {
                answer = mcp.handle(try JSONValue(parsing: Array(line.utf8)))
            } catch {
                answer = .object(["jsonrpc": .string("2.0"), "id": .null,
                                  "error": .object(["code": .integer(-32700), "message": .string("not JSON: \(error)")])])
            }
            if let answer {
                FileHandle.standardOutput.write(Data(answer.encoded() + [0x0A]))
            }
        }
        return 0
    }

    /// One admin API call, waited for (the stdio loop answers one message at a time).
    private static func call(_ base: String, _ token: String?, _ method: String, _ path: String, _ body: JSONValue?) throws -> (Int, JSONValue) {
        guard let target = URL(string: base + "/__moonmock" + path) else { throw MCPCallError(message: "not a URL: \(base)\(path)") }
        var request = URLRequest(url: target, timeoutInterval: 30)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = Data(body.encoded()) } else if method != "GET" && method != "DELETE" { request.httpBody = Data("null".utf8) }
        let outcome = Locked<Result<(Int, Data), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error { outcome.withLock { $0 = .failure(error) } } else {
                outcome.withLock { $0 = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data())) }
            }
            done.signal()
        }.resume()
        done.wait()
        switch outcome.withLock({ $0 })! {
        case .failure(let error):
            throw MCPCallError(message: "the server at \(base) did not answer: \(error.localizedDescription); is moonmock serve running?")
        case .success(let (status, data)):
            let json = (try? JSONValue(parsing: Array(data))) ?? .string(String(decoding: data, as: UTF8.self))
            return (status, json)
        }
    }

    struct MCPCallError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
