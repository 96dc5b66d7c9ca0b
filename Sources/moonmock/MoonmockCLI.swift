import Foundation
import LuaBridge
import MoonmockCore
import MoonmockScript

/// The `moonmock` command line. Exit codes: 0 success, 1 script error, 64 usage error.
enum MoonmockCLI {
    static let version = MoonmockVersion.current

    static let usage = """
    usage: moonmock <command> [options]

    commands:
      serve [SCRIPT]                     serve a script over HTTP (default ./mocks.lua)
      check SCRIPT                       load and validate a script, list its rules
      test [SCRIPT] [SPEC...]            run spec files (*_test.lua) against a script
      init [DIR]                         write a small working mocks folder
      types [--write DIR | --path]       the editor annotations of the mock API
      request SCRIPT METHOD URL          run one request through a script, print it like curl -i
      record --upstream URL              proxy to a real API and write what it answered as a mocks.lua
      convert har|proto|bundle|stubs ... a mocks.lua from a HAR file, .proto files, a Mock-Bundle or a stubs folder
      mcp --url URL                      MCP over stdio for coding agents, driving a running server
      validate SCHEMA [INSTANCE...]      JSON or YAML instances (or JSON lines) against a JSON Schema
      drift SCRIPT --upstream URL        the same requests to the mocks and the real API: what differs
      health [--url URL]                 ask a running server's health (a container's HEALTHCHECK)
      help [COMMAND]                     show help

    options:
      -h, --help                         show help
      --version                          show the version
    """

    static let serveUsage = """
    usage: moonmock serve [SCRIPT | --bundle DIR] [options]

    Serves SCRIPT (default ./mocks.lua), or the Mock-Bundle folder DIR, over HTTP/1.1,
    or HTTPS with a certificate.
    Port 0 picks a free port and prints it. SIGINT/SIGTERM drain requests and exit 0.

    options:
      --bundle DIR           serve the Mock-Bundle in DIR (DIR/bundle.json) instead of a script
      --host ADDRESS         address to bind (default 127.0.0.1)
      --port PORT            port to bind (default 8080; 0 picks one)
      --threads N            worker threads (default: one per VM, at most one per core)
      --vms N|auto           Lua VMs running the script (default auto: one per core but
                             one, left to the client, when no answer can depend on a VM's
                             own copy of the script's locals and globals, as moonmock
                             check reports; else 1). With --vms N, Lua locals and
                             globals are per VM: keep state shared in mock.state
      --tls-cert FILE        PEM certificate (and chain), with --tls-key FILE: serve HTTPS
      --tls-key FILE         PEM private key
      --tls self-signed      serve HTTPS with a certificate from a local CA made once and
                             kept in ~/.cache/moonmock/tls (prints the CA file to trust)
      --tls-name NAME        with --tls self-signed: also valid for NAME (repeatable;
                             localhost, 127.0.0.1 and ::1 always are)
      --log MODE             request lines: none, compact or verbose (default none)
      --journal N            requests kept in the journal (default 1000)
      --journal-body BYTES   how much of each answer's body the journal keeps (default
                             65536; 0 keeps none)
      --state-limit BYTES    the most mock.state may hold; a write past it is a Lua error
                             (default 67108864)
      --store redis://[:PASSWORD@]HOST[:PORT][/DB][?prefix=NAME]
                             share mock.state, times budgets, sequences, switches,
                             runtime rules and the journal with every replica started
                             with the same URL (Redis); unreachable at start: exit 1
      --store-timeout S      the longest a request waits for the store (default 1); past
                             it, or while the store is away, the request gets 503
      --store-workers N      threads answering the requests that may wait for the store,
                             off the event loops (default 8)
      --replica NAME         this replica's name in the shared journal (default
                             replica-N)
      --admin-token TOKEN    require Authorization: Bearer TOKEN for /__moonmock/ (the
                             dashboard asks for it once and keeps a session cookie)
      --admin-host NAME      also answer the admin API for Host NAME (repeatable; the bound
                             address, localhost, 127.0.0.1 and ::1 always are)
      --rules FILE.json      add the runtime rules in FILE (one rule JSON or an array, as
                             POST /__moonmock/rules takes) before serving (repeatable)
      --cors                 answer browser preflights and let pages of any origin read
                             every answer (rules, 404s, the admin API)
      --cors-origin ORIGIN   as --cors, for ORIGIN only (repeatable); the admin API also
                             takes changes from a page at ORIGIN
      --cors-credentials     with --cors or --cors-origin: let pages send cookies and
                             Authorization (Access-Control-Allow-Credentials: true)
      --mcp                  also answer MCP (the Model Context Protocol) for coding
                             agents at /__moonmock/mcp (streamable HTTP)
      --spec FILE            check requests and answers against an OpenAPI 3 spec (YAML
                             or JSON; repeatable): GET /__moonmock/contract
      --spec-mode MODE       warn (default: serve and report) or enforce (refuse a
                             request that breaks the spec with 400, and turn an answer
                             that does into a 500)
      --seed N               seed mock.fake, mock.schema, chaos and math.random: the
                             same requests get the same data and failures (default 0)
      --handler-timeout MS   the longest a handler may wait in all (mock.fetch, mock.sleep)
                             before its request gets 504 naming the wait (default 30000)
      --max-body BYTES       larger request bodies get 413 (default 16777216); also the
                             largest WebSocket message, inflated
      --ws-deflate on|off    WebSocket permessage-deflate, when the client offers it
                             (default on)
      --http2 on|off         HTTP/2: h2 by ALPN with TLS, h2c with prior knowledge or
                             Upgrade: h2c without (default on)
      --metrics on|off       GET /__moonmock/metrics for Prometheus (default on)
      --header-timeout S     a request head must arrive whole within S seconds of its
                             first byte, else 408 and close (default 30)
      --body-timeout S       a request body may pause at most S seconds (default 30)
      --send-timeout S       an answer the client takes nothing of for S seconds is
                             dropped with its connection (default 60)
      --max-pending-output BYTES
                             the most answer bytes held for clients that have not read
                             them; a large answer past it gets 503 (default 268435456)
      --lib DIR              also look for require()d modules in DIR (repeatable)
      --no-watch             do not reload the script when it changes
      --unsafe               lift the sandbox (trusted local scripts only)
      -h, --help             show this help

    Environment: OTEL_EXPORTER_OTLP_ENDPOINT=URL exports a span per request to an
    OpenTelemetry collector over OTLP/HTTP, with the standard OTEL_* settings
    (docs/deploy.md)
    """

    static let convertUsage = """
    usage: moonmock convert har FILE.har|FILE.zip [--host HOST[:PORT]]... [--out DIR] [writer options]
           moonmock convert openapi SPEC.json|SPEC.yaml [--out DIR]
           moonmock convert wiremock DIR [--out DIR]
           moonmock convert proto FILE.proto... [--include DIR]... [--out DIR]
           moonmock convert bundle DIR
           moonmock convert stubs DIR --endpoint NAME="METHOD /pattern"...

    har: a rule per distinct request of a HAR 1.2 file (browsers, Playwright, Charles,
    Proxyman), in first-seen order: method, path, exact query, GraphQL operation and
    variables, body; a request answered differently each time becomes a mock.sequence.
    Bodies embedded (text in its charset, or base64) or attached (Playwright's _file,
    beside the HAR or in its .zip). With --out DIR it writes DIR/mocks.lua and
    DIR/fixtures/ (large and binary bodies); without, it prints the script with every body
    inline. What it cannot convert is listed at the top of the script.

    openapi: a rule per operation of an OpenAPI 3.0 or 3.1 document, path parameters as
    :name, each documented status an answer (its example, else one made from the schema),
    the first 2xx the default and the others variants to switch at runtime.

    wiremock: a rule per mapping of a WireMock folder (mappings/*.json, __files/): URL,
    query, header and body matchers, responses, delays, faults, priorities, and scenarios
    as mock.state.

    proto: mock.proto and a mock.grpc rule per method of the .proto files (protoc compiles
    them; --include adds import folders), each answering an example message: a stream of
    two for server streaming, one per message for bidirectional calls.

    bundle, stubs: prints a mocks.lua that behaves like the Mock-Bundle folder DIR
    (DIR/bundle.json) or the stubs folder DIR, leaving the fixture files where they are.
    Run it from the folder the script will live in and give DIR relative to it.

    options:
      --host HOST[:PORT]                  har: only entries for HOST (repeatable)
      --out DIR                           write DIR/mocks.lua and DIR/fixtures/
      --keep-host                         pin rules to the scheme and host they came from
      --redact HEADER                     write this response header as "REDACTED" (repeatable;
                                          Authorization, Cookie, X-Api-Key and
                                          Proxy-Authorization always are)
      --redact-json KEY                   write this JSON key, at any depth, as "REDACTED"
      --redact-cookie NAME                write this cookie's value as REDACTED (session-like
                                          cookies, HttpOnly or named like one, always are)
      --keep-cookies                      write every cookie's value as it came
      --endpoint NAME="METHOD /pattern"   a stubs endpoint: sub-folder NAME answers the pattern
      -h, --help                          show this help
    """

    static let checkUsage = """
    usage: moonmock check SCRIPT [--lib DIR]... [--unsafe]

    Loads SCRIPT, reports the first error as FILE:LINE: MESSAGE (exit 1),
    or lists the rules in the order they are tried and whether serve may run
    the script on several Lua VMs, or why not (exit 0).

    options:
      --lib DIR        also look for require()d modules in DIR (repeatable; MOONMOCK_PATH too)
      --unsafe         lift the sandbox (trusted local scripts only)
      -h, --help       show this help
    """

    static let requestUsage = """
    usage: moonmock request SCRIPT METHOD URL [-H 'Name: value']... [-d BODY | -d @FILE] [options]
           moonmock request SCRIPT GRPC pkg.Service/Method [-d '{"json": "message"}'] [options]

    Runs one request through SCRIPT without a server and prints the response
    as curl -i does: status line, headers, a blank line, the body. URL is a path
    (/users/7) or an absolute URL (https://api.example.com/users/7).
    A fault exits like curl would: connection_reset 56, empty_response 52,
    malformed_chunk 56, timeout 28. A mock.proxy rule forwards the request to its
    upstream and prints its answer. When no rule answers, a terminal gets the
    closest rules as a table; a pipe gets the 404's JSON. GRPC calls a mock.grpc
    method with the message -d gives as JSON (an array of them for streaming
    calls) and prints grpc-status, then each answer message as a line of JSON.

    options:
      -H, --header 'Name: value'   add a request header (repeatable)
      -d, --data BODY              request body; @FILE reads it from FILE
      --fail                       exit 22 when the status is 400 or more
      --no-delay                   do not wait for the response's delay
      --json                       the near-miss of an unmatched request as JSON, also on a terminal
      --table                      the near-miss as a table, also into a pipe
      --lib DIR                    also look for require()d modules in DIR (repeatable)
      --unsafe                     lift the sandbox (trusted local scripts only)
      -h, --help                   show this help
    """

    /// Each command: its usage text and what runs it.
    static let table: [(name: String, usage: String, run: @Sendable ([String]) -> Int32)] = [
        ("serve", serveUsage, Serve.run), ("check", checkUsage, Check.run), ("test", Test.usage, Test.run),
        ("request", requestUsage, Request.run), ("init", Init.usage, Init.run), ("types", Init.typesUsage, Init.types),
        ("health", Health.usage, Health.run),
        ("convert", convertUsage, Convert.run), ("record", Record.usage, Record.run),
        ("mcp", MCPCommand.usage, MCPCommand.run), ("validate", Validate.usage, Validate.run), ("drift", Drift.usage, Drift.run),
    ]
    static let commands = table.map(\.name) + ["help", "version"]

    /// Runs the CLI with `arguments` (without the program name) and returns the exit code.
    static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            return usageError("missing command", usage)
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help":
            print(usage)
            return 0
        case "help":
            guard let topic = rest.first else { print(usage); return 0 }
            guard let entry = table.first(where: { $0.name == topic }) else { return usageError(unknownCommand(topic), usage) }
            print(entry.usage)
            return 0
        case "--version", "version":
            print("moonmock \(version) (\(LuaVM.luaRelease))")
            return 0
        default:
            guard let entry = table.first(where: { $0.name == command }) else { return usageError(unknownCommand(command), usage) }
            return entry.run(rest)
        }
    }


    /// "unknown command 'x'", with the nearest command when there is one.
    static func unknownCommand(_ name: String) -> String {
        "unknown command '\(name)'" + (EditDistance.nearest(to: name, among: commands).map { "; did you mean '\($0)'?" } ?? "")
    }

    /// "unknown option '--x'", with the nearest of `options` when there is one.
    static func unknownOption(_ option: String, among options: [String]) -> String {
        let name = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
        return "unknown option '\(option)'" + (EditDistance.nearest(to: name, among: options).map { "; did you mean '\($0)'?" } ?? "")
    }

    /// "unknown option '--x'" with the nearest option that `usage` lists.
    static func unknownOption(_ option: String, usage: String) -> String {
        var options: [String] = []
        var rest = Substring(usage)
        while let start = rest.range(of: "--") {
            let name = rest[start.lowerBound...].prefix { $0 == "-" || $0.isLetter || $0.isNumber }
            if name.count > 2 { options.append(String(name)) }
            rest = rest[name.endIndex...]
        }
        return unknownOption(option, among: options)
    }

    /// Prints `moonmock: message` and the usage to stderr; returns 64 (EX_USAGE).
    static func usageError(_ message: String, _ usage: String) -> Int32 {
        printError("moonmock: \(message)")
        printError(usage)
        return 64
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Options shared by the commands that load a script.
struct ScriptFlags {
    var libraries: [String] = []
    var unsafe = false

    /// Consumes `--lib DIR` / `--unsafe` at `arguments[i]`; returns how many were used, 0 if none.
    mutating func parse(_ arguments: [String], at i: Int) throws -> Int {
        switch arguments[i] {
        case "--lib":
            guard i + 1 < arguments.count else { throw UsageError("--lib needs a directory") }
            libraries.append(arguments[i + 1])
            return 2
        case "--unsafe":
            unsafe = true
            return 1
        default:
            if arguments[i].hasPrefix("--lib=") {
                libraries.append(String(arguments[i].dropFirst(6)))
                return 1
            }
            return 0
        }
    }

    var options: ScriptOptions {
        ScriptOptions(libraryPaths: libraries + ScriptOptions.environmentLibraryPaths(), unsafe: unsafe,
                      log: { MoonmockCLI.printError("* log: " + $0) })
    }
}

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
