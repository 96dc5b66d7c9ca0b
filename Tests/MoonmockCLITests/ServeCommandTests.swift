import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("moonmock serve")
struct ServeCommandTests {
    @Test("serve on port 0 prints the port, answers, and exits 0 on SIGTERM after draining")
    func serve() async throws {
        let (process, out, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--log", "compact"], until: "\n")
        defer { process.stop() }
        let firstLine = text.split(separator: "\n").first.map(String.init) ?? ""
        let auto = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
        #expect(firstLine.hasPrefix("moonmock: serving mocks.lua (9 rules, \(auto == 1 ? "1 VM" : "\(auto) VMs")) on http://127.0.0.1:"))
        let port = try #require(firstLine.split(separator: ":").last.flatMap { Int($0) })

        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":7,"name":"User 7"}"#)
        // The dashboard's reads of the admin API stay out of the log; a change shows.
        _ = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/__moonmock/requests")!)
        var reset = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/__moonmock/requests")!)
        reset.httpMethod = "DELETE"
        _ = try await URLSession(configuration: .ephemeral).data(for: reset)

        #expect(process.stop(), "SIGTERM did not stop it within 10 s")
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect((text + rest).contains("GET /users/7 → 200  (GET /users/:id)"))
        #expect(!(text + rest).contains("GET /__moonmock/requests"))
        #expect((text + rest).contains("DELETE /__moonmock/requests → 200  (admin)"))
        #expect((text + rest).contains("moonmock: stopping"))
    }

    @Test("a SIGTERM sent the moment the port is printed stops serve, every time")
    func earlySignal() async throws {
        for attempt in 1...20 {
            let (process, _, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--no-watch"], until: "\n")
            defer { process.stop() }
            #expect(text.hasPrefix("moonmock: serving"), "\(text)")
            process.terminate()
            let stopped = await cliThread { process.wait(seconds: 10) }
            #expect(stopped && process.terminationStatus == 0, "try \(attempt): the SIGTERM was lost")
        }
    }

    @Test("serve --tls self-signed prints the CA to trust; curl trusting it gets the answer over HTTPS")
    func serveSelfSigned() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        let (process, _, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--tls", "self-signed", "--tls-name", "api.test"],
                                                 environment: ["XDG_CACHE_HOME": cache.path], until: "admin API")
        defer { process.stop() }
        let ca = cache.appendingPathComponent("moonmock/tls/ca.pem").path
        #expect(text.contains("moonmock: self-signed certificate for localhost, 127.0.0.1, ::1, api.test"), "\(text)")
        #expect(text.contains("clients trust it with the local CA at \(ca) (curl --cacert \(ca))"), "\(text)")
        let line = try #require(text.split(separator: "\n").first { $0.contains(" on https://127.0.0.1:") })
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let curl = Subprocess()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sS", "--max-time", "10", "--cacert", ca, "--resolve", "api.test:\(port):127.0.0.1", "https://api.test:\(port)/users/7"]
        let body = Pipe()
        curl.standardOutput = body
        try curl.run()
        let data = body.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":7,"name":"User 7"}"#)
        #expect(process.stop(), "SIGTERM did not stop it within 10 s")
        #expect(process.terminationStatus == 0)
    }

    @Test("at its descriptor limit, serve sheds the clients that have waited longest for a head and keeps serving")
    func descriptorLimit() async throws {
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // `ulimit -n` sets the hard limit too: the server cannot raise it past 64.
        process.arguments = ["-c", "ulimit -n 64 && exec \"$0\" serve examples/mocks.lua --port 0 --no-watch", CLIRunner.binary.path]
        process.currentDirectoryURL = CLIRunner.packageRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.stop() }
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
        let curl = Subprocess()
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
          arguments: ["http", "json", "lua-json", "template", "bundle", "stubs", "routes", "lua-pattern", "regex-lua", "openapi", "har", "range", "websocket", "store", "h2", "proto"])
    func fuzzCorpora(target: String) async throws {
        let replay = CLIRunner.binary.deletingLastPathComponent().appendingPathComponent("MoonmockFuzz")
        let corpus = CLIRunner.packageRoot.appendingPathComponent("Tests/Fuzz/corpus/\(target)").path
        let process = Subprocess()
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
            let process = Subprocess()
            process.executableURL = CLIRunner.binary
            process.arguments = ["serve", "--port", "0", "--no-watch"] + arguments
            process.currentDirectoryURL = CLIRunner.packageRoot
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { process.stop() }
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
        let process = Subprocess()
        process.executableURL = CLIRunner.binary
        process.arguments = ["serve", "--bundle", dir.path, "--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.stop() }
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("moonmock: serving bundle.json (1 rule, 1 VM) on http://127.0.0.1:"))
        let port = try #require(line.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        let (data, _) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/hello")!)
        #expect(String(decoding: data, as: UTF8.self) == "hello from the bundle")
        #expect(process.stop(), "SIGTERM did not stop it within 10 s")
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

@Suite("serve --rules and --cors")
struct ServeRulesTests {
    @Test("--rules FILE.json adds runtime rules before serving; a bad file stops serve naming the file and the field")
    func rulesFile() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-serve-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("rules.json"), bad = dir.appendingPathComponent("bad.json")
        try Data(#"[{"name": "seeded", "method": "GET", "path": "/users/7", "respond": {"status": 503, "json": {"error": "maintenance"}}}]"#.utf8).write(to: good)
        try Data(#"{"path": "/x", "respond": {"status": "teapot"}}"#.utf8).write(to: bad)
        let (process, _, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--no-watch", "--rules", good.path, "--cors"], until: "\n")
        defer { process.stop() }
        let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) }, "\(text)")
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        request.setValue("http://localhost:5173", forHTTPHeaderField: "Origin")
        let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 503 && String(decoding: data, as: UTF8.self) == #"{"error":"maintenance"}"#)
        #expect(http.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "http://localhost:5173")
        let (rules, _) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:\(port)/__moonmock/rules")!)
        #expect(String(decoding: rules, as: UTF8.self).hasPrefix(#"[{"conditions":[],"definition":{"id":"seeded""#))
        #expect(String(decoding: rules, as: UTF8.self).contains(#""location":"rules.json""#))

        let refused = try CLIRunner.run(["serve", "examples/mocks.lua", "--port", "0", "--rules", bad.path])
        #expect(refused.status == 1)
        #expect(refused.stderr == "moonmock: \(bad.path): rule.respond.status: expected an integer from 100 to 599, got \"teapot\"\n", "\(refused.stderr)")
        let usage = try CLIRunner.run(["serve", "--cors-origin", "localhost:3000"])
        #expect(usage.status == 64 && usage.stderr.contains("--cors-origin takes an origin such as http://localhost:3000"))
    }
}

@Suite("moonmock record")
struct RecordCommandTests {
    @Test("record proxies to the upstream and writes mocks.lua and fixtures on SIGTERM; the script checks and answers the same")
    func record() async throws {
        let (upstream, _, upText) = try launchServe(["examples/mocks.lua", "--port", "0", "--no-watch"], until: "\n")
        defer { upstream.stop() }
        let upPort = try #require(upText.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-record-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let process = Subprocess()
        process.executableURL = CLIRunner.binary
        process.arguments = ["record", "--upstream", "http://127.0.0.1:\(upPort)", "--out", out.path, "--port", "0", "--only", "/users/:id"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.stop() }
        let first = await cliThread { String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self) }
        let line = try #require(first.split(separator: "\n").first.map(String.init))
        #expect(line.hasPrefix("moonmock: recording http://127.0.0.1:\(upPort) on http://127.0.0.1:"), "\(first)")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let session = URLSession(configuration: .ephemeral)
        let (user, _) = try await session.data(from: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        #expect(String(decoding: user, as: UTF8.self) == #"{"id":7,"name":"User 7"}"#)
        let (users, _) = try await session.data(from: URL(string: "http://127.0.0.1:\(port)/users")!)   // forwarded, not recorded (--only)
        #expect(!users.isEmpty)
        #expect(process.stop(), "SIGTERM did not stop record")
        #expect(process.terminationStatus == 0)
        let rest = await cliThread { String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        #expect((first + rest).contains("moonmock: wrote \(out.path)/mocks.lua (1 rule) and 0 fixtures"), "\(first + rest)")
        let check = try CLIRunner.run(["check", "mocks.lua"], in: out)
        #expect(check.status == 0 && check.stdout.contains("GET /users/7"), "\(check.stdout)\(check.stderr)")
        let replay = try CLIRunner.run(["request", "mocks.lua", "GET", "/users/7"], in: out)
        #expect(replay.stdout.hasSuffix(#"{"id":7,"name":"User 7"}"#))
        #expect(try CLIRunner.run(["record"]).status == 64)
        #expect(try CLIRunner.run(["record", "--upstream", "ftp://x"]).stderr.contains("must start with http:// or https://"))
    }
}
