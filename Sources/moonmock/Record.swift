import Foundation
import MoonmockCore
import MoonmockServer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `moonmock record --upstream URL`: a proxy that keeps what the real API answers and writes
/// it as a mocks.lua (through the one ScriptWriter) on SIGINT/SIGTERM and on
/// `POST /__moonmock/recordings/snapshot`.
enum Record {
    static let usage = """
    usage: moonmock record --upstream URL [--out DIR] [--port P] [--host ADDRESS]
                           [--redact HEADER]... [--redact-json KEY]... [--redact-cookie NAME]...
                           [--keep-cookies] [--only PATTERN]... [--keep-host] [--log]

    Forwards every request to URL and records it with its answer. On SIGINT or SIGTERM (and
    on POST /__moonmock/recordings/snapshot) writes DIR/mocks.lua and DIR/fixtures/: a rule
    per distinct request (method, path, exact query, GraphQL operation and variables, body),
    in first-seen order; a request answered differently each time becomes a mock.sequence.
    Point the app (or the browser) at this server instead of the real API: absolute URLs
    back at the upstream are rewritten to this server, and replayed on whichever port serves.

    options:
      --upstream URL         the real API: https://api.example.com (a path prefix is kept)
      --out DIR              where to write (default ./recorded)
      --port PORT            port to bind (default 8080; 0 picks one and prints it)
      --host ADDRESS         address to bind (default 127.0.0.1)
      --redact HEADER        write this response header as "REDACTED" (repeatable; Authorization,
                             Cookie, X-Api-Key and Proxy-Authorization always are)
      --redact-json KEY      write this JSON key, at any depth, as "REDACTED" (repeatable)
      --redact-cookie NAME   write this cookie's value as REDACTED (repeatable; session-like
                             cookies, HttpOnly or named like a session or token, always are)
      --keep-cookies         write every cookie's value as it came
      --only PATTERN         record only paths matching PATTERN, e.g. /api/* (repeatable;
                             every request is still forwarded)
      --keep-host            pin the rules to the upstream's scheme, host and path prefix
      --log                  print each request forwarded, with its status
      -h, --help             show this help
    """

    static func run(_ arguments: [String]) -> Int32 {
        StopSignal.install()
        var configuration = ServerConfiguration()
        var upstream: String?
        var settings = Recorder.Settings(upstream: "", out: "recorded")
        let args = ArgumentReader(arguments)
        do {
            while let arg = args.next() {
                switch arg {
                case "-h", "--help": print(usage); return 0
                case "--upstream": upstream = try args.value(arg)
                case "--out": settings.out = try args.value(arg)
                case "--host": configuration.host = try args.value(arg)
                case "--port": configuration.port = try args.port(arg)
                case "--redact": settings.redactHeaders.insert(try args.value(arg))
                case "--redact-json": settings.redactJSONKeys.insert(try args.value(arg))
                case "--only":
                    let v = try args.value(arg)
                    do { settings.only.append(try RoutePattern(v)) } catch { throw UsageError("--only: \(error)") }
                case "--keep-host": settings.keepHost = true
                case "--redact-cookie": settings.redactCookies.insert(try args.value(arg))
                case "--keep-cookies": settings.keepCookies = true
                case "--log": settings.log = { line in Serve.say("moonmock: " + line) }
                default:
                    if arg.hasPrefix("-") { throw UsageError(MoonmockCLI.unknownOption(arg, usage: usage)) }
                    throw UsageError("unexpected argument '\(arg)'")
                }
            }
            guard let upstream else { throw UsageError("missing --upstream URL") }
            guard upstream.lowercased().hasPrefix("http://") || upstream.lowercased().hasPrefix("https://") else {
                throw UsageError("--upstream must start with http:// or https://, got '\(upstream)'")
            }
            settings.upstream = upstream
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, usage)
        } catch {
            return 1
        }
        let engine = Engine()
        configuration.threads = 2
        let server = MoonmockServer(engine: engine, configuration: configuration)
        do {
            try server.start()
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
        server.recorder.start(settings)
        let out = settings.out ?? "recorded"
        Serve.say("moonmock: recording \(settings.upstream) on \(server.baseURL)")
        Serve.say("moonmock: writes \(out)/mocks.lua on SIGINT or SIGTERM, or POST \(server.baseURL)/__moonmock/recordings/snapshot")
        StopSignal.wait()
        server.stop(drainSeconds: 5)   // answers still on their way are recorded too
        guard let output = server.recorder.stop() else { return 0 }
        do {
            try output.save(in: URL(fileURLWithPath: out))
        } catch {
            MoonmockCLI.printError("moonmock: cannot write \(out)/mocks.lua: \(error)")
            return 1
        }
        Serve.say("moonmock: wrote \(out)/mocks.lua (\(output.ruleCount) rule\(output.ruleCount == 1 ? "" : "s")) and "
                  + "\(output.fixtures.count) fixture\(output.fixtures.count == 1 ? "" : "s")")
        return 0
    }
}
