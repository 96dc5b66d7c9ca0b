import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript
import MoonmockRedis
import MoonmockProxy
import MoonmockServer
import MoonmockTelemetry
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `moonmock serve [SCRIPT]`: the socket server.
enum Serve {
    static func run(_ arguments: [String]) -> Int32 {
        // First of all: a SIGTERM sent the moment the port is printed (or while the script
        // loads) must stop the server, never be lost between two handlers.
        StopSignal.install()
        var flags = ScriptFlags()
        var configuration = ServerConfiguration()
        var script: String?
        var journal = 1000
        var journalBody = 64 * 1024
        var stateLimit = 64 << 20
        var handlerTimeout = 30_000
        var store: String?, storeTimeout = 1.0, replica: String?, storeWorkers = ServerConfiguration().storeWorkers
        let cores = ServerConfiguration().threads
        // Automatic VMs leave a core to the client: a mock server shares its machine with the
        // tests or the app calling it (on two cores with wrk on the same machine, one worker
        // served 0.89x nginx static against 0.79x for two, in one bench-server run).
        let automatic = VMCount.automatic(max: max(1, cores - 1))
        var vms = automatic
        var threads: Int?
        var watch = true
        var bundle: String?
        var certPath: String?, keyPath: String?
        var selfSigned = false
        var tlsNames: [String] = []
        var rulesFiles: [String] = []
        var corsOrigins: [String]?
        var corsCredentials = false
        var specs: [String] = []
        var specMode = OpenAPIContract.Mode.warn
        var seed: UInt64?
        let args = ArgumentReader(arguments)
        do {
            while let arg = args.next() {
                switch arg {
                case "-h", "--help": print(MoonmockCLI.serveUsage); return 0
                case "--host": configuration.host = try args.value(arg)
                case "--port": configuration.port = try args.port(arg)
                case "--threads":
                    let v = try args.value(arg)
                    guard let n = Int(v), n >= 1 else { throw UsageError("--threads must be a positive number, got '\(v)'") }
                    threads = n
                case "--tls-cert": certPath = try args.value(arg)
                case "--tls-key": keyPath = try args.value(arg)
                case "--tls":
                    let v = try args.value(arg)
                    guard v == "self-signed" else { throw UsageError("--tls takes self-signed (or use --tls-cert and --tls-key), got '\(v)'") }
                    selfSigned = true
                case "--tls-name": tlsNames.append(try args.value(arg))
                case "--log":
                    let v = try args.value(arg)
                    guard let mode = RequestLogMode(rawValue: v) else { throw UsageError("--log must be none, compact or verbose, got '\(v)'") }
                    configuration.log = mode
                case "--journal":
                    let v = try args.value(arg)
                    guard let n = Int(v), n >= 1 else { throw UsageError("--journal must be a positive number, got '\(v)'") }
                    journal = n
                case "--journal-body":
                    let v = try args.value(arg)
                    guard let n = Int(v), n >= 0 else { throw UsageError("--journal-body must be a number of bytes (0 keeps none), got '\(v)'") }
                    journalBody = n
                case "--admin-token": configuration.adminToken = try args.value(arg)
                case "--admin-host": configuration.adminHosts.append(try args.value(arg))
                case "--vms":
                    let v = try args.value(arg)
                    if v == "auto" {
                        vms = automatic
                    } else {
                        guard let n = Int(v), n >= 1 else { throw UsageError("--vms must be a positive number or auto, got '\(v)'") }
                        vms = .exactly(n)
                    }
                case "--max-body":
                    let v = try args.value(arg)
                    guard let n = Int(v), n >= 0 else { throw UsageError("--max-body must be a number of bytes, got '\(v)'") }
                    configuration.maxBodyBytes = n
                case "--handler-timeout":
                    let v = try args.value(arg)
                    guard let n = Int(v), n > 0 else { throw UsageError("--handler-timeout must be a number of milliseconds, got '\(v)'") }
                    handlerTimeout = n
                case "--max-pending-output":
                    let v = try args.value(arg)
                    guard let n = Int(v), n > 0 else { throw UsageError("--max-pending-output must be a number of bytes, got '\(v)'") }
                    configuration.maxPendingOutput = n
                case "--header-timeout", "--body-timeout", "--send-timeout":
                    let v = try args.value(arg)
                    guard let seconds = Double(v), seconds > 0, seconds.isFinite else {
                        throw UsageError("\(arg) must be a number of seconds, got '\(v)'")
                    }
                    switch arg {
                    case "--header-timeout": configuration.headerTimeout = seconds
                    case "--body-timeout": configuration.bodyTimeout = seconds
                    default: configuration.sendTimeout = seconds
                    }
                case "--state-limit":
                    let v = try args.value(arg)
                    guard let n = Int(v), n > 0 else { throw UsageError("--state-limit must be a number of bytes, got '\(v)'") }
                    stateLimit = n
                case "--store": store = try args.value(arg)
                case "--store-timeout":
                    let v = try args.value(arg)
                    guard let t = Double(v), t > 0, t <= 60 else { throw UsageError("--store-timeout must be seconds (0 < S <= 60), got '\(v)'") }
                    storeTimeout = t
                case "--store-workers":
                    let v = try args.value(arg)
                    guard let n = Int(v), (1...256).contains(n) else { throw UsageError("--store-workers must be a number from 1 to 256, got '\(v)'") }
                    storeWorkers = n
                case "--replica": replica = try args.value(arg)
                case "--no-watch": watch = false
                case "--bundle": bundle = try args.value(arg)
                case "--rules": rulesFiles.append(try args.value(arg))
                case "--cors": corsOrigins = corsOrigins ?? []
                case "--cors-credentials": corsCredentials = true
                case "--mcp": configuration.mcp = true
                case "--spec": specs.append(try args.value(arg))
                case "--seed":
                    let v = try args.value(arg)
                    guard let n = UInt64(v) ?? Int64(v).map({ UInt64(bitPattern: $0) }) else { throw UsageError("--seed takes an integer, got '\(v)'") }
                    seed = n
                case "--spec-mode":
                    let v = try args.value(arg)
                    guard let mode = OpenAPIContract.Mode(rawValue: v) else { throw UsageError("--spec-mode takes warn or enforce, got '\(v)'") }
                    specMode = mode
                case "--ws-deflate":
                    let v = try args.value(arg)
                    guard v == "on" || v == "off" else { throw UsageError("--ws-deflate takes on or off, got '\(v)'") }
                    configuration.webSocketDeflate = v == "on"
                case "--metrics":
                    let v = try args.value(arg)
                    guard v == "on" || v == "off" else { throw UsageError("--metrics takes on or off, got '\(v)'") }
                    configuration.metrics = v == "on"
                case "--http2":
                    let v = try args.value(arg)
                    guard v == "on" || v == "off" else { throw UsageError("--http2 takes on or off, got '\(v)'") }
                    configuration.http2 = v == "on"
                case "--cors-origin":
                    let v = try args.value(arg)
                    guard v.hasPrefix("http://") || v.hasPrefix("https://") else {
                        throw UsageError("--cors-origin takes an origin such as http://localhost:3000, got '\(v)'")
                    }
                    corsOrigins = (corsOrigins ?? []) + [v]
                default:
                    let used = try flags.parse(arguments, at: args.index - 1)
                    if used > 0 { args.skip(used - 1); continue }
                    if arg.hasPrefix("-") { throw UsageError(MoonmockCLI.unknownOption(arg, usage: MoonmockCLI.serveUsage)) }
                    guard script == nil else { throw UsageError("unexpected argument '\(arg)'") }
                    script = arg
                }
            }
            if (certPath == nil) != (keyPath == nil) { throw UsageError("--tls-cert and --tls-key go together") }
            if selfSigned && certPath != nil { throw UsageError("--tls self-signed or --tls-cert/--tls-key, not both") }
            if !tlsNames.isEmpty && !selfSigned { throw UsageError("--tls-name goes with --tls self-signed") }
            // With a store, Lua runs on the store workers (the loops hand them what may wait for
            // Redis): a VM for each. Else automatic VMs serve the workers there are: no more VMs
            // than --threads asks for.
            if case .automatic = vms, store != nil { vms = .automatic(max: max(threads ?? cores, storeWorkers)) }
            else if case .automatic = vms, let threads { vms = .automatic(max: threads) }
            if bundle != nil && script != nil { throw UsageError("give a SCRIPT or --bundle DIR, not both (a script can use mock.bundle)") }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, MoonmockCLI.serveUsage)
        } catch {
            return 1
        }

        if let certPath, let keyPath {
            guard let cert = try? String(contentsOfFile: certPath, encoding: .utf8),
                  let key = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
                MoonmockCLI.printError("moonmock: cannot read \(certPath) or \(keyPath)")
                return 1
            }
            configuration.tlsCertificatePEM = cert
            configuration.tlsKeyPEM = key
        }
        var authority: URL?
        if selfSigned {
            do {
                let tls = try SelfSignedCertificate.load(names: tlsNames)
                configuration.tlsCertificatePEM = tls.certificatePEM
                configuration.tlsKeyPEM = tls.keyPEM
                authority = tls.authorityFile
                say("moonmock: self-signed certificate for \(tls.names.joined(separator: ", "))")
            } catch {
                MoonmockCLI.printError("moonmock: \(error)")
                return 1
            }
        }
        if corsCredentials && corsOrigins == nil {
            return MoonmockCLI.usageError("--cors-credentials needs --cors or --cors-origin ORIGIN", MoonmockCLI.serveUsage)
        }
        configuration.cors = corsOrigins.map { CORSPolicy(origins: $0, credentials: corsCredentials) }
        let colour = isatty(1) != 0
        configuration.logSink = { line in
            Serve.say(colour ? Serve.colourize(line) : line)
        }

        let file = script ?? "mocks.lua"
        if bundle == nil { configuration.scriptPath = URL(fileURLWithPath: file).standardizedFileURL.path }
        let feed = EventFeed()
        let shared: RedisStore?
        do {
            shared = try store.map { try RedisStore(url: RedisURL($0), timeout: storeTimeout, journalCapacity: journal, replica: replica) }
        } catch {
            MoonmockCLI.printError("moonmock: --store: \(error)")
            return 1
        }
        // OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT (or another OTEL_* variable) asks for them.
        let otel = OTLPConfiguration()
        for warning in otel.warnings { MoonmockCLI.printError("moonmock: " + warning) }
        let exporter = otel.enabled ? OTLPExporter(otel, client: CurlOutbound.shared) { Serve.say("moonmock: " + $0) } : nil
        let engine = Engine(environment: seed.map { MockEnvironment.system.seeded($0) } ?? .system, journalCapacity: journal, state: StateStore(limitBytes: stateLimit, feed: feed, backend: shared), feed: feed,
                            store: shared, tracer: exporter.map { Tracer(sampler: otel.sampler, sink: $0) })
        engine.handlerTimeoutMilliseconds.store(handlerTimeout, ordering: .relaxed)
        engine.journal.responseBodyLimit = journalBody
        if !specs.isEmpty {
            do {
                let checkers = try specs.map { try OpenAPIContract(file: URL(fileURLWithPath: $0), mode: specMode) }
                engine.setContracts(checkers, from: .commandLine)
                for c in checkers {
                    say("moonmock: checking against \(c.file) (\(c.operations.count) operation\(c.operations.count == 1 ? "" : "s"), \(c.mode.rawValue))")
                    for note in c.notes { say("moonmock: \(c.file): \(note)") }
                }
            } catch {
                MoonmockCLI.printError("moonmock: --spec: \(error)")
                return 1
            }
        }
        let host: ScriptHost
        do {
            let log: @Sendable (String) -> Void = { MoonmockCLI.printError("moonmock: " + $0) }
            if let bundle {
                host = try ScriptHost(source: #"mock.bundle(".")"#, name: "bundle.json", baseDirectory: bundle, engine: engine,
                                      options: flags.options, log: log)
            } else {
                host = try ScriptHost(file: file, engine: engine, options: flags.options, vms: vms, log: log)
            }
            if watch { try host.startWatching() }
        } catch {
            MoonmockCLI.printError(String(describing: error))
            return 1
        }
        let generation = host.current
        // One worker per VM by default: with one VM, a second worker only waits for it, and
        // the VM's memory then moves between cores with every other request (measured on
        // two cores: one worker 96.6k rps, two workers 87.8k, with a third more CPU per request).
        // With a store the VMs are the store workers': the loops are as many as without one
        // (a core left for the client, as the automatic VM count leaves one).
        configuration.threads = threads ?? max(1, min(store == nil ? generation.vmCount : cores - 1, cores))
        configuration.storeWorkers = storeWorkers
        let reload: @Sendable () throws -> MoonmockServer.ReloadResult = {
            let outcome = host.reload()
            return .init(ok: outcome.ok, message: outcome.message, rules: host.status.rules)
        }
        let runtime: RuntimeRules
        do {
            let folder = bundle ?? URL(fileURLWithPath: file).deletingLastPathComponent().path
            runtime = try RuntimeRules(engine: engine, options: flags.options, baseDirectory: folder, origin: "admin API")
            for path in rulesFiles {
                guard let data = FileManager.default.contents(atPath: path) else {
                    MoonmockCLI.printError("moonmock: cannot read --rules \(path)")
                    return 1
                }
                try runtime.add(jsonText: data, origin: (path as NSString).lastPathComponent)
            }
        } catch {
            MoonmockCLI.printError("moonmock: \(rulesFiles.count == 1 ? rulesFiles[0] + ": " : "")\(error)")
            return 1
        }
        raiseDescriptorLimit()
        let server = MoonmockServer(engine: engine, configuration: configuration, reload: reload,
                                    scriptStatus: { host.status.json }, runtimeRules: runtime)
        do {
            try server.start()
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
        say("moonmock: serving \(generation.displayName) (\(generation.rules.count) rule\(generation.rules.count == 1 ? "" : "s"), \(Serve.vmSummary(generation))) on \(server.baseURL)")
        if let authority {
            say("moonmock: clients trust it with the local CA at \(authority.path) (curl --cacert \(authority.path))")
        }
        if let reason = generation.sharing?.reason { say("moonmock: one Lua VM, because \(reason)") }
        if exporter != nil { say("moonmock: " + otel.summary) }
        if let shared { say("moonmock: sharing state, switches and the journal through \(shared.url.display) as \(shared.replicaName)") }
        say("moonmock: admin API and dashboard at \(server.baseURL)/__moonmock/\(watch ? "; reloading on save" : "")")
        waitForSignal()
        say("moonmock: stopping (draining \(server.requestsInFlight) request(s))")
        server.stop(drainSeconds: 5)
        exporter?.flush(seconds: 3)
        return 0
    }

    /// Raises the soft limit on open descriptors to the hard one: every connection is one, and
    /// the default soft limit (1,024) is reached by a load test or a few hundred slow clients.
    /// At whatever limit, the server sheds its longest-waiting idle connections to take in new ones.
    static func raiseDescriptorLimit() { MoonmockServer.raiseDescriptorLimit() }

    /// "2 VMs" or "1 VM".
    static func vmSummary(_ generation: ScriptGeneration) -> String {
        generation.vmCount == 1 ? "1 VM" : "\(generation.vmCount) VMs"
    }

    /// Writes a line to stdout at once (no buffering: scripts read the port from it).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Blocks until SIGINT or SIGTERM (received since ``StopSignal/install()``).
    static func waitForSignal() { StopSignal.wait() }

    /// Colours the status of a log line: green 2xx/3xx, yellow 4xx, red 5xx and faults.
    static func colourize(_ line: String) -> String {
        guard let arrow = line.range(of: "→ ") else { return line }
        let rest = line[arrow.upperBound...]
        let status = rest.prefix { $0 != " " }
        let code: String
        switch status.first {
        case "2", "3": code = "32"
        case "4": code = "33"
        default: code = "31"
        }
        return String(line[..<arrow.upperBound]) + "\u{1B}[\(code)m\(status)\u{1B}[0m" + rest.dropFirst(status.count)
    }
}
