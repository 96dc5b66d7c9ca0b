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
      convert bundle|stubs DIR           print a mocks.lua equivalent to a Mock-Bundle or stubs folder
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
      --state-limit BYTES    the most mock.state may hold; a write past it is a Lua error
                             (default 67108864)
      --admin-token TOKEN    require Authorization: Bearer TOKEN for /__moonmock/ (the
                             dashboard asks for it once and keeps a session cookie)
      --admin-host NAME      also answer the admin API for Host NAME (repeatable; the bound
                             address, localhost, 127.0.0.1 and ::1 always are)
      --max-body BYTES       larger request bodies get 413 (default 16777216)
      --header-timeout S     a request head must arrive whole within S seconds of its
                             first byte, else 408 and close (default 30)
      --body-timeout S       a request body may pause at most S seconds (default 30)
      --send-timeout S       an answer the client takes nothing of for S seconds is
                             dropped with its connection (default 60)
      --lib DIR              also look for require()d modules in DIR (repeatable)
      --no-watch             do not reload the script when it changes
      --unsafe               lift the sandbox (trusted local scripts only)
      -h, --help             show this help

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
        #expect(r.stdout == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{\"id\":7,\"name\":\"User 7\"}")
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

@Suite("moonmock serve")
struct ServeCommandTests {
    @Test("serve on port 0 prints the port, answers, and exits 0 on SIGTERM after draining")
    func serve() async throws {
        let (process, out, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--log", "compact"], until: "\n")
        defer { if process.isRunning { process.terminate() } }
        let firstLine = text.split(separator: "\n").first.map(String.init) ?? ""
        let auto = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
        #expect(firstLine.hasPrefix("moonmock: serving mocks.lua (9 rules, \(auto == 1 ? "1 VM" : "\(auto) VMs")) on http://127.0.0.1:"))
        let port = try #require(firstLine.split(separator: ":").last.flatMap { Int($0) })

        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":7,"name":"User 7"}"#)

        process.terminate()   // SIGTERM
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect((text + rest).contains("GET /users/7 → 200  (GET /users/:id)"))
        #expect((text + rest).contains("moonmock: stopping"))
    }

    @Test("serve --tls self-signed prints the CA to trust; curl trusting it gets the answer over HTTPS")
    func serveSelfSigned() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        let (process, _, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--tls", "self-signed", "--tls-name", "api.test"],
                                                 environment: ["XDG_CACHE_HOME": cache.path], until: "admin API")
        defer { if process.isRunning { process.terminate() } }
        let ca = cache.appendingPathComponent("moonmock/tls/ca.pem").path
        #expect(text.contains("moonmock: self-signed certificate for localhost, 127.0.0.1, ::1, api.test"), "\(text)")
        #expect(text.contains("clients trust it with the local CA at \(ca) (curl --cacert \(ca))"), "\(text)")
        let line = try #require(text.split(separator: "\n").first { $0.contains(" on https://127.0.0.1:") })
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sS", "--max-time", "10", "--cacert", ca, "--resolve", "api.test:\(port):127.0.0.1", "https://api.test:\(port)/users/7"]
        let body = Pipe()
        curl.standardOutput = body
        try curl.run()
        let data = body.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":7,"name":"User 7"}"#)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("at its descriptor limit, serve sheds the clients that have waited longest for a head and keeps serving")
    func descriptorLimit() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // `ulimit -n` sets the hard limit too: the server cannot raise it past 64.
        process.arguments = ["-c", "ulimit -n 64 && exec \"$0\" serve examples/mocks.lua --port 0 --no-watch", CLIRunner.binary.path]
        process.currentDirectoryURL = CLIRunner.packageRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var text = ""
        while !text.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        // Blocking sockets and curl on a thread of their own, not on the test pool every test shares.
        let (body, elapsed, told) = await cliThread { () -> (String, Double, Int) in
        // 100 clients that start a head and never finish it: more than the server has descriptors.
        var slow: [Int32] = []
        defer { slow.forEach { close($0) } }
        for _ in 0..<100 {
            let fd = rawConnect(port)
            if fd < 0 { continue }
            _ = write(fd, "GET /users/1 HTTP/1.1\r\nHost: x\r\n", 33)
            slow.append(fd)
        }
        usleep(300_000)
        // A normal client is still served, promptly.
        let started = Date()
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        // (A retry for a machine busy with the rest of the suite: the point is that it gets in.)
        curl.arguments = ["-sS", "--max-time", "5", "--retry", "2", "--retry-all-errors", "http://127.0.0.1:\(port)/users/7"]
        let body = Pipe(), failure = Pipe()
        curl.standardOutput = body
        curl.standardError = failure
        do { try curl.run() } catch { return ("curl did not start: \(error)", 0, 0) }
        var data = body.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        if data.isEmpty { data = Data("curl \(curl.terminationStatus): ".utf8) + failure.fileHandleForReading.readDataToEndOfFile() }
        let elapsed = Date().timeIntervalSince(started)
        // The ones shed were told why.
        var told = 0
        for fd in slow {
            var tv = timeval(tv_sec: 0, tv_usec: 20_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 512)
            let n = read(fd, &buffer, buffer.count)
            if n > 0 && String(decoding: buffer[0..<n], as: UTF8.self).hasPrefix("HTTP/1.1 408") { told += 1 }
        }
        return (String(decoding: data, as: UTF8.self), elapsed, told)
        }
        #expect(body == #"{"id":7,"name":"User 7"}"#)
        // Sanitized builds run several times slower (scripts/test sets the scale).
        #expect(elapsed < 5 * (Double(ProcessInfo.processInfo.environment["MOONMOCK_TEST_TIME_SCALE"] ?? "") ?? 1))
        #expect(told > 0)
    }

    @Test("every fuzz target passes its seed corpus (the inputs fuzzing found, kept as regressions)",
          arguments: ["http", "json", "lua-json", "template", "bundle", "stubs", "routes", "lua-pattern"])
    func fuzzCorpora(target: String) async throws {
        let replay = CLIRunner.binary.deletingLastPathComponent().appendingPathComponent("MoonmockFuzz")
        let corpus = CLIRunner.packageRoot.appendingPathComponent("Tests/Fuzz/corpus/\(target)").path
        let process = Process()
        process.executableURL = replay
        process.arguments = [target, corpus]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = await cliThread { String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let count = try FileManager.default.contentsOfDirectory(atPath: corpus).count
        #expect(text == "\(target): \(count) inputs, no failure\n", "\(text)")
    }

    @Test("serve runs one worker per Lua VM unless --threads says otherwise; by default a VM per core when the script allows")
    func workers() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let counting = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-counting-\(UUID().uuidString).lua")
        try Data("local n = 0\nmock.get('/n', function() n = n + 1; return { n = n } end)\n".utf8).write(to: counting)
        defer { try? FileManager.default.removeItem(at: counting) }
        let auto = max(1, cores - 1)   // a core is left to the client
        let cases: [([String], Int, String)] = [
            (["examples/mocks.lua"], auto, "(9 rules, \(auto == 1 ? "1 VM" : "\(auto) VMs"))"),
            (["examples/mocks.lua", "--vms", "auto", "--threads", "2"], 2, "(9 rules, 2 VMs)"),
            (["examples/mocks.lua", "--vms", "1"], 1, "(9 rules, 1 VM)"),
            (["examples/mocks.lua", "--vms", "2"], min(2, cores), "(9 rules, 2 VMs)"),
            (["examples/mocks.lua", "--vms", "2", "--threads", "3"], 3, "(9 rules, 2 VMs)"),
            ([counting.path], 1, "(1 rule, 1 VM)"),
            ([counting.path, "--vms", "auto", "--threads", "2"], 2, "one Lua VM, because \(counting.lastPathComponent):2: assigns the variable 'n'"),
            ([counting.path, "--vms", "2"], min(2, cores), "(1 rule, 2 VMs)"),
        ]
        for (arguments, expected, said) in cases {
            let process = Process()
            process.executableURL = CLIRunner.binary
            process.arguments = ["serve", "--port", "0", "--no-watch"] + arguments
            process.currentDirectoryURL = CLIRunner.packageRoot
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
            var text = ""
            let deadline = Date().addingTimeInterval(20)
            while !text.contains("admin API"), Date() < deadline {
                text += String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            }
            let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) }, "\(text)")
            #expect(text.contains(said), "\(arguments): \(text)")
            let (data, _) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/__moonmock/health")!)
            let health = String(decoding: data, as: UTF8.self)
            let workers = health.components(separatedBy: "\"connections_per_worker\":[").last?.prefix { $0 != "]" }
                .split(separator: ",").count
            #expect(workers == expected, "\(arguments): \(health)")
        }
    }

    @Test("serve --bundle serves a Mock-Bundle folder")
    func serveBundle() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-serve-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"[{"request":{"url":"://127.0.0.1/hello"},"response":{"code":200,"file":"hello.txt"}}]"#.utf8)
            .write(to: dir.appendingPathComponent("bundle.json"))
        try Data("hello from the bundle".utf8).write(to: dir.appendingPathComponent("hello.txt"))
        let process = Process()
        process.executableURL = CLIRunner.binary
        process.arguments = ["serve", "--bundle", dir.path, "--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("moonmock: serving bundle.json (1 rule, 1 VM) on http://127.0.0.1:"))
        let port = try #require(line.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        let (data, _) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/hello")!)
        #expect(String(decoding: data, as: UTF8.self) == "hello from the bundle")
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("a broken script stops serve before it listens, naming file and line")
    func brokenScript() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("mock.get('/a', 'a')\nmock.get(\n".utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let r = try CLIRunner.run(["serve", "--port", "0"], in: dir)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("mocks.lua:3:"))
    }
}

@Suite("moonmock convert")
struct ConvertCommandTests {
    static let bundle = #"""
    [
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 200, "file": "users.json" } },
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 500, "file": "users.json" } },
      { "request": { "method": "POST", "url": "://api.example.com/users" }, "response": { "code": 201, "headers": { "X-Id": "9" } } },
      { "request": { "url": "://api.example.com/search", "parameters": { "q": null, "page": "2" } },
        "response": { "code": 200, "file": "page2.txt", "mime_type": "text/plain" } }
    ]
    """#

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-convert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("happy"), withIntermediateDirectories: true)
        try Data(Self.bundle.utf8).write(to: dir.appendingPathComponent("happy/bundle.json"))
        try Data(#"[{"id":1}]"#.utf8).write(to: dir.appendingPathComponent("happy/users.json"))
        try Data("page two".utf8).write(to: dir.appendingPathComponent("happy/page2.txt"))
        try Data(#"mock.bundle("happy")"#.utf8).write(to: dir.appendingPathComponent("original.lua"))
        return dir
    }

    /// Status line and body of one request, without headers (content types may differ).
    func answer(_ script: String, _ method: String, _ url: String, in dir: URL) throws -> String {
        let r = try CLIRunner.run(["request", script, method, url], in: dir)
        let statusLine = r.stdout.split(separator: "\r\n").first.map(String.init) ?? ""
        let body = r.stdout.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        return statusLine.hasPrefix("HTTP/1.1 404") ? "404" : statusLine + "|" + body
    }

    @Test("a converted Mock-Bundle answers like the bundle")
    func bundle() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let converted = try CLIRunner.run(["convert", "bundle", "happy"], in: dir)
        #expect(converted.status == 0, "\(converted.stderr)")
        try Data(converted.stdout.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let requests = [
            ("GET", "https://api.example.com/users"), ("GET", "http://api.example.com/users"), ("POST", "http://api.example.com/users"),
            ("PUT", "http://api.example.com/users"), ("GET", "http://api.example.com/users?x=1"),
            ("GET", "http://api.example.com/search?q=a&page=2"), ("GET", "http://api.example.com/search?q=a"),
            ("GET", "http://api.example.com/search?q=a&page=3"), ("GET", "http://api.example.com/search?q=a&z=1"),
            ("GET", "http://api.example.com/search"), ("GET", "http://other.example.com/users"),
        ]
        var answers: [String] = []
        for (method, url) in requests {
            let original = try answer("original.lua", method, url, in: dir)
            #expect(try answer("mocks.lua", method, url, in: dir) == original, "\(method) \(url)")
            answers.append(original)
        }
        #expect(answers.filter { $0 != "404" }.count == 5)
    }

    @Test("a converted stubs folder loads with the same endpoints")
    func stubs() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("stubs/getUser"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: dir.appendingPathComponent("stubs/getUser/ok.200.json"))
        let converted = try CLIRunner.run(["convert", "stubs", "stubs", "--endpoint", "getUser=GET /users/:id"], in: dir)
        #expect(converted.status == 0)
        #expect(converted.stdout.contains(#"mock.stubs("stubs", {"#))
        try Data(converted.stdout.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let check = try CLIRunner.run(["check", "mocks.lua"], in: dir)
        #expect(check.status == 0)
        #expect(check.stdout.contains("getUser") && check.stdout.contains("variants: ok.200.json, timeout"))
    }

    @Test("convert usage errors exit 64", arguments: [[], ["bundle"], ["zip", "x"], ["stubs", "dir"], ["bundle", "/abs"], ["bundle", "../up"]])
    func usage(_ arguments: [String]) throws {
        let r = try CLIRunner.run(["convert"] + arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains("usage: moonmock convert"))
    }
}

/// A TCP connection to 127.0.0.1:`port`, or -1.
func rawConnect(_ port: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    if rc != 0 { close(fd); return -1 }
    return fd
}

/// Runs blocking `work` on a thread of its own: blocking on the cooperative pool (two threads on
/// a two-core machine) would hold up every other test's tasks.
func cliThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in Thread { continuation.resume(returning: work()) }.start() }
}

/// Starts `moonmock serve ARGUMENTS` in the package root and reads its standard output until
/// `marker` appears (or 20 s pass): the process, its output pipe, and what it printed so far.
func launchServe(_ arguments: [String], environment extra: [String: String] = [:], until marker: String) throws -> (Process, Pipe, String) {
    let process = Process()
    process.executableURL = CLIRunner.binary
    process.arguments = ["serve"] + arguments
    process.currentDirectoryURL = CLIRunner.packageRoot
    if !extra.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 } }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    var text = ""
    let deadline = Date().addingTimeInterval(20)
    while !text.contains(marker), Date() < deadline {
        let data = out.fileHandleForReading.availableData
        if data.isEmpty { break }
        text += String(decoding: data, as: UTF8.self)
    }
    return (process, out, text)
}
