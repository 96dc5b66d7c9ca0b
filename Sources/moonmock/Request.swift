import Foundation
import MoonmockCore
import MoonmockProxy
import MoonmockScript

/// `moonmock request SCRIPT METHOD URL`: one request through the engine, printed like `curl -i`.
enum Request {
    static func run(_ arguments: [String]) -> Int32 {
        var flags = ScriptFlags()
        var positional: [String] = []
        var headers = HTTPHeaders()
        var body: [UInt8] = []
        var failOnError = false
        var waitForDelay = true
        var table = isatty(STDOUT_FILENO) == 1
        var i = 0
        do {
            while i < arguments.count {
                let arg = arguments[i]
                switch arg {
                case "-h", "--help":
                    print(MoonmockCLI.requestUsage)
                    return 0
                case "-H", "--header":
                    guard i + 1 < arguments.count else { throw UsageError("\(arg) needs 'Name: value'") }
                    let raw = arguments[i + 1]
                    guard let colon = raw.firstIndex(of: ":"), colon != raw.startIndex else {
                        throw UsageError("header '\(raw)' is not 'Name: value'")
                    }
                    headers.add(String(raw[..<colon]), raw[raw.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                    i += 2
                case "-d", "--data":
                    guard i + 1 < arguments.count else { throw UsageError("\(arg) needs a body or @FILE") }
                    let raw = arguments[i + 1]
                    if raw.hasPrefix("@") {
                        guard let data = FileManager.default.contents(atPath: String(raw.dropFirst())) else {
                            MoonmockCLI.printError("moonmock: cannot read '\(raw.dropFirst())'")
                            return 1
                        }
                        body = Array(data)
                    } else {
                        body = Array(raw.utf8)
                    }
                    i += 2
                case "--fail":
                    failOnError = true; i += 1
                case "--no-delay":
                    waitForDelay = false; i += 1
                case "--json":
                    table = false; i += 1
                case "--table":
                    table = true; i += 1
                default:
                    let used = try flags.parse(arguments, at: i)
                    if used > 0 { i += used; continue }
                    if arg.hasPrefix("-") { throw UsageError(MoonmockCLI.unknownOption(arg, usage: MoonmockCLI.requestUsage)) }
                    positional.append(arg)
                    i += 1
                }
            }
            guard positional.count == 3 else {
                let names = ["SCRIPT", "METHOD", "URL"]
                throw UsageError(positional.count < 3 ? "missing \(names[positional.count])" : "unexpected argument '\(positional[3])'")
            }
            let target = positional[2]
            if positional[1].uppercased() == "GRPC" {
                _ = try grpcRequest(method: target, body: body, headers: headers)   // checked before the script loads
            } else if !target.contains("://") && !target.hasPrefix("/") {
                throw UsageError("URL '\(target)' is neither a path (/\(target)) nor an absolute URL (http://HOST/\(target))")
            }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, MoonmockCLI.requestUsage)
        } catch {
            return 1
        }

        let engine = Engine()
        do {
            try engine.loadScript(file: positional[0], options: flags.options)
        } catch {
            MoonmockCLI.printError(String(describing: error))
            return 1
        }
        let url = positional[2]
        let grpc = positional[1].uppercased() == "GRPC"
        guard let request = grpc ? try? grpcRequest(method: url, body: body, headers: headers)
                                 : MockRequest(method: positional[1], url: url, headers: headers, body: body) else { return 1 }
        let exchange = engine.handle(request)

        if exchange.delayMilliseconds > 0 {
            MoonmockCLI.printError("* delay: \(Int(exchange.delayMilliseconds.rounded())) ms")
            if waitForDelay { usleep(useconds_t(min(exchange.delayMilliseconds, 3_600_000) * 1000)) }
        }
        var response = exchange.response
        if case .suspended(let suspension)? = response.fault {
            // A handler that waits: driven here (its calls through libcurl), then its webhooks sent.
            let answered = DispatchSemaphore(value: 0)
            let result = Locked<MockResponse?>(nil)
            _ = engine.drive(suspension, client: CurlOutbound.shared, hop: { DispatchQueue.global().async(execute: $0) }) { final, _ in
                result.withLock { $0 = final }
                answered.signal()
            }
            answered.wait()
            response = result.withLock { $0 } ?? response
        }
        if engine.outbox.isHolding {
            engine.outbox.client = CurlOutbound.shared
            engine.outbox.release(exchange.request.id)
            let idle = DispatchSemaphore(value: 0)
            engine.outbox.whenIdle(timeout: 30) { _ in idle.signal() }
            idle.wait()
        }
        if let target = response.proxy {
            // mock.proxy: forwarded here too, as the in-process door forwards it.
            MoonmockCLI.printError("* mock.proxy: forwarded to \(target.url(for: exchange.request))")
            response = Upstream.shared.fetch(exchange.request, to: target)
        }
        if grpc && (exchange.matched || !table) { return printGRPC(response, fail: failOnError, wait: waitForDelay) }
        switch response.fault {
        case .connectionReset?, .error?: MoonmockCLI.printError("* fault: connection_reset (connection reset by peer)"); return 56
        case .emptyResponse?: MoonmockCLI.printError("* fault: empty_response (empty reply from server)"); return 52
        case .malformedChunk?: MoonmockCLI.printError("* fault: malformed_chunk (invalid chunked encoding)"); return 56
        case .timeout?: MoonmockCLI.printError("* fault: timeout (the server never answers)"); return 28
        case .dribble(let bps)?: MoonmockCLI.printError("* fault: dribble (body sent at \(bps) bytes/s)")
        case .forward?, .suspended?: break   // forwarded or driven above
        case .websocket?:
            MoonmockCLI.printError("* a WebSocket route: moonmock serve upgrades such requests; a plain request gets this 426")
        case .stream(let plan)?:
            return printStream(response, plan, head: exchange.request.method == "HEAD", wait: waitForDelay)
        case nil: break
        }
        var out = "HTTP/1.1 \(response.status) \(response.reasonPhrase)\r\n"
        for field in response.headers where !field.name.equalsIgnoringASCIICase("content-length") {
            out += "\(field.name): \(field.value)\r\n"
        }
        out += "Content-Length: \(response.body.count)\r\n\r\n"
        if table && !exchange.matched {
            FileHandle.standardOutput.write(Data((out + nearMissTable(exchange)).utf8))
            return failOnError ? 22 : 0
        }
        FileHandle.standardOutput.write(Data(out.utf8) + Data(exchange.request.method == "HEAD" ? [] : response.body))
        return failOnError && response.status >= 400 ? 22 : 0
    }

    /// An unmatched request's closest rules, for a person at a terminal.
    static func nearMissTable(_ exchange: Exchange) -> String {
        let request = exchange.request
        guard !exchange.nearMisses.isEmpty else { return "no rule matched \(request.method) \(request.url), and no rule came close\n" }
        var out = "no rule matched \(request.method) \(request.url); the closest rules:\n"
        for (n, miss) in exchange.nearMisses.enumerated() {
            out += "  \(n + 1). \(miss.ruleID)" + (miss.location.map { "  (\($0))" } ?? "") + "\n"
            for line in miss.mismatches { out += "       ✘ \(line)\n" }
            for line in miss.passed { out += "       ✔ \(line)\n" }
        }
        return out
    }
}
