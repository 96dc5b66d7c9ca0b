import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("moonmock CLI")
struct CLITests {
    static let help = """
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

    @Test("--help prints the golden help text")
    func help() throws {
        let r = try CLIRunner.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout == Self.help)
        #expect(try CLIRunner.run(["help"]).stdout == Self.help)
    }

    static let serveHelp = """
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

    @Test("serve --help prints its golden help text")
    func serveHelp() throws {
        let r = try CLIRunner.run(["serve", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout == Self.serveHelp)
    }

    @Test("every command has --help")
    func commandHelp() throws {
        for command in ["serve", "check", "request", "convert"] {
            let r = try CLIRunner.run([command, "--help"])
            #expect(r.status == 0)
            #expect(r.stdout.hasPrefix("usage: moonmock \(command) "))
        }
    }

    @Test("--version names the tool and the Lua release")
    func version() throws {
        let r = try CLIRunner.run(["--version"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("moonmock 0.1.0 (Lua 5.4"))
    }

    @Test("usage errors exit 64 with a usage line", arguments: [
        [], ["frobnicate"], ["check"], ["check", "a.lua", "b.lua"], ["check", "--bogus", "a.lua"],
        ["request", "examples/mocks.lua", "GET"], ["request", "examples/mocks.lua", "GET", "/x", "-H", "novalue"],
        ["serve", "--port", "99999"], ["serve", "--log", "loud"], ["serve", "--tls-cert", "c.pem"], ["serve", "--tls", "bogus"], ["serve", "--state-limit", "-1"], ["serve", "--header-timeout", "soon"], ["serve", "--send-timeout", "0"], ["serve", "--tls-name", "a.test"], ["serve", "a.lua", "b.lua"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let r = try CLIRunner.run(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("moonmock: "))
        #expect(r.stderr.contains("usage: moonmock"))
    }

    @Test("check lists the rules of every example script")
    func checkExamples() throws {
        let examples = CLIRunner.packageRoot.appendingPathComponent("examples")
        let scripts = FileManager.default.enumerator(atPath: examples.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".lua") }
        #expect(scripts.contains("mocks.lua"))
        // wrk scripts for the nginx baseline are not mocks, nor are specs (moonmock test runs those)
        for script in scripts where !script.contains("/lib/") && !script.hasPrefix("bench/nginx/") && !script.hasSuffix("_test.lua") {
            let r = try CLIRunner.run(["check", "examples/" + script])
            #expect(r.status == 0, "\(script): \(r.stderr)")
            #expect(r.stdout.contains(": ok, "), "\(script)")
        }
        let main = try CLIRunner.run(["check", "examples/mocks.lua"])
        #expect(main.stdout.contains("GET /users/:id"))
        #expect(main.stdout.contains("graphql GetUser"))
        #expect(main.stdout.hasSuffix("Lua VMs: serve may run several (no answer depends on a VM's own Lua state)\n"))
    }

    @Test("check exits 1 with file:line on a broken script")
    func checkError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("mock.get('/a', 'a')\nmock.get('/b', 'b'\n".utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let r = try CLIRunner.run(["check", "mocks.lua"], in: dir)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("mocks.lua:3:"))
        try Data("local n = 0\nmock.get('/n', function() n = n + 1; return { n = n } end)\n".utf8).write(to: dir.appendingPathComponent("counting.lua"))
        let counting = try CLIRunner.run(["check", "counting.lua"], in: dir)
        #expect(counting.status == 0 && counting.stdout.hasSuffix("Lua VMs: one, since counting.lua:2: assigns the variable 'n', kept from the script's load; each VM has its own copy (keep it in mock.state)\n"), "\(counting.stdout)")
        let missing = try CLIRunner.run(["check", "nope.lua"], in: dir)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope.lua: cannot read the script (no such file)"))
    }

    @Test("request prints the response like curl -i")
    func request() throws {
        let r = try CLIRunner.run(["request", "examples/mocks.lua", "GET", "http://localhost/users/7"])
        #expect(r.status == 0)
        #expect(r.stdout == "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 24\r\n\r\n{\"id\":7,\"name\":\"User 7\"}")
    }

    @Test("request sends headers and bodies, also from a file")
    func requestBody() throws {
        let graphql = try CLIRunner.run(["request", "examples/mocks.lua", "POST", "/graphql", "-H", "Content-Type: application/json",
                                         "-d", #"{"operationName":"GetUser","variables":{"id":"42"}}"#])
        #expect(graphql.stdout.hasSuffix(#"{"data":{"user":{"id":"42","name":"User 42"}}}"#))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-body-\(UUID().uuidString).json")
        try Data(#"{"currency":"EUR","total":5000}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let cart = try CLIRunner.run(["request", "examples/mocks.lua", "PUT", "/carts/9", "-H", "X-Tenant: acme", "-d", "@" + file.path])
        #expect(cart.stdout.hasPrefix("HTTP/1.1 402 Payment Required\r\n"))
    }

    @Test("an unmatched request prints the near-miss 404; --fail exits 22")
    func requestUnmatched() throws {
        let r = try CLIRunner.run(["request", "examples/mocks.lua", "GET", "/userz/1"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(r.stdout.contains(#""rule":"GET /users/:id""#))
        #expect(try CLIRunner.run(["request", "--fail", "examples/mocks.lua", "GET", "/userz/1"]).status == 22)
    }

    @Test("faults exit like curl; delays are reported")
    func requestFaultAndDelay() throws {
        let reset = try CLIRunner.run(["request", "examples/mocks.lua", "GET", "/reset"])
        #expect(reset.status == 56)
        #expect(reset.stdout.isEmpty)
        #expect(reset.stderr.contains("* fault: connection_reset"))
        let slow = try CLIRunner.run(["request", "--no-delay", "examples/mocks.lua", "GET", "/slow"])
        #expect(slow.status == 0)
        #expect(slow.stderr.contains("* delay: 1500 ms"))
    }
}
