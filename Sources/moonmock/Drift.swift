import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockContract
import MoonmockCore
import MoonmockScript

/// `moonmock drift SCRIPT --upstream URL`: the same requests to the mocks and to the real API,
/// and where their answers differ in what matters.
enum Drift {
    static let usage = """
    usage: moonmock drift SCRIPT --upstream URL [--spec FILE] [--requests FILE] [options]

    Sends each request to SCRIPT (in process) and to the real API at URL, and reports where
    the answers differ: the status, the content type, the headers the spec names, the body's
    shape (keys, and the type at each place: object, array, string, number, boolean; not
    values unless --values), and what breaks the spec on either side. Exit 1 on any drift, 2
    when the real API cannot be reached.

    The requests: those of --requests FILE (the admin API's journal, GET /__moonmock/requests,
    or a HAR file), else those the spec tests beside SCRIPT (*_test.lua) send, else one per
    operation of --spec (its examples, else values made from its schemas), else one per GET
    rule of the script (parameters set to 1).

    options:
      --upstream URL         the real API's origin (and any path prefix its paths add)
      --spec FILE            an OpenAPI 3 spec: its requests, its headers, its violations
      --requests FILE        the requests to send (journal JSON or HAR)
      --values               compare values too, not only the shape
      --header 'NAME: VALUE' send this header to the real API (repeatable; never printed)
      --token-env NAME       send Authorization: Bearer $NAME to the real API
      --timeout S            the longest a real answer may take (default 30)
      --json                 print the report as JSON
      --junit FILE           also write the report as JUnit XML (a test per request)
      -h, --help             show this help
    """

    struct Options {
        var script = ""
        var upstream = ""
        var spec: String?
        var requests: String?
        var values = false
        var headers: [(String, String)] = []
        var timeout = 30.0
        var json = false
        var junit: String?
    }

    static func run(_ arguments: [String]) -> Int32 {
        var o = Options()
        let args = ArgumentReader(arguments)
        do {
            while let arg = args.next() {
                switch arg {
                case "-h", "--help": print(usage); return 0
                case "--upstream": o.upstream = try args.value(arg)
                case "--spec": o.spec = try args.value(arg)
                case "--requests": o.requests = try args.value(arg)
                case "--values": o.values = true
                case "--json": o.json = true
                case "--junit": o.junit = try args.value(arg)
                case "--header":
                    let v = try args.value(arg)
                    guard let colon = v.firstIndex(of: ":") else { throw UsageError("--header takes 'Name: value'") }
                    o.headers.append((String(v[..<colon]).trimmingCharacters(in: .whitespaces), String(v[v.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
                case "--token-env":
                    let name = try args.value(arg)
                    guard let token = ProcessInfo.processInfo.environment[name], !token.isEmpty else {
                        throw UsageError("--token-env \(name): the environment has no \(name)")
                    }
                    o.headers.append(("Authorization", "Bearer " + token))
                case "--timeout":
                    let v = try args.value(arg)
                    guard let s = Double(v), s > 0 else { throw UsageError("--timeout takes seconds, got '\(v)'") }
                    o.timeout = s
                default:
                    if arg.hasPrefix("-") { throw UsageError(MoonmockCLI.unknownOption(arg, usage: usage)) }
                    guard o.script.isEmpty else { throw UsageError("unexpected argument '\(arg)'") }
                    o.script = arg
                }
            }
            if o.script.isEmpty { o.script = "mocks.lua" }
            guard o.upstream.hasPrefix("http://") || o.upstream.hasPrefix("https://") else {
                throw UsageError("--upstream takes the real API's URL (http:// or https://)")
            }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, usage)
        } catch {
            return 1
        }
        return check(o)
    }

    static func check(_ o: Options) -> Int32 {
        let engine = Engine()
        let contract: OpenAPIContract?
        do {
            try engine.loadScript(file: o.script)
            contract = try o.spec.map { try OpenAPIContract(file: URL(fileURLWithPath: $0)) }
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
        let requests: [Probe]
        do {
            if let file = o.requests {
                requests = try Probe.read(file: file)
            } else if let tested = Probe.from(tests: o.script), !tested.isEmpty {
                requests = tested
            } else {
                requests = contract.map(Probe.from(spec:)) ?? Probe.from(rules: engine.allRules)
            }
        } catch {
            MoonmockCLI.printError("moonmock: --requests: \(error)")
            return 1
        }
        guard !requests.isEmpty else {
            MoonmockCLI.printError("moonmock: no requests to send: give --requests FILE or --spec FILE, or write GET rules")
            return 1
        }
        let upstream = o.upstream.hasSuffix("/") ? String(o.upstream.dropLast()) : o.upstream
        var reports: [Report] = []
        for probe in requests {
            let mock = engine.handle(MockRequest(method: probe.method, url: "http://localhost" + probe.target,
                                                 headers: HTTPHeaders(probe.headers), body: probe.body)).response
            let real = DriftUpstream.send(probe, to: upstream, extra: o.headers, timeout: o.timeout)
            if case .failure(let message) = real, reports.isEmpty && requests.count > 1 && message.contains("could not connect") {
                MoonmockCLI.printError("moonmock: \(upstream): \(message)")
                return 2
            }
            reports.append(Report.compare(probe, mock: mock, real: real, contract: contract, values: o.values))
        }
        let drifted = reports.filter(\.drift).count
        if o.json {
            let json = JSONValue.object(["requests": .array(reports.map(\.json)), "drift": .integer(Int64(drifted)), "total": .integer(Int64(reports.count))])
            print(String(decoding: json.encoded(), as: UTF8.self))
        } else {
            for r in reports { print(r.text) }
            print("\(drifted) of \(reports.count) request\(reports.count == 1 ? "" : "s") drifted")
        }
        if let junit = o.junit {
            do { try Report.junit(reports).write(toFile: junit, atomically: true, encoding: .utf8) } catch {
                MoonmockCLI.printError("moonmock: cannot write \(junit): \(error.localizedDescription)")
                return 1
            }
        }
        if reports.allSatisfy({ if case .failure = $0.real { true } else { false } }) { return 2 }
        return drifted == 0 ? 0 : 1
    }
}

/// The real API's answer, or why there is none.
enum Answer {
    case answer(MockResponse)
    case failure(String)
}

/// URLSession, one request at a time, with the extra headers (credentials) added.
enum DriftUpstream {
    static func send(_ probe: Probe, to upstream: String, extra: [(String, String)], timeout: Double) -> Answer {
        guard let url = URL(string: upstream + probe.target) else { return .failure("not a URL: \(upstream + probe.target)") }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = probe.method
        for (name, value) in probe.headers where !["host", "content-length", "connection"].contains(name.lowercased()) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if !probe.body.isEmpty { request.httpBody = Data(probe.body) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            if let http = response as? HTTPURLResponse {
                var headers = HTTPHeaders()
                for (k, v) in http.allHeaderFields { headers.add(String(describing: k), String(describing: v)) }
                box.answer = .answer(MockResponse(status: http.statusCode, headers: headers, body: Array(data ?? Data())))
            } else {
                box.answer = .failure(error.map { ($0 as NSError).code == NSURLErrorCannotConnectToHost ? "could not connect" : $0.localizedDescription } ?? "no answer")
            }
            done.signal()
        }.resume()
        done.wait()
        return box.answer
    }

    final class Box: @unchecked Sendable { var answer: Answer = .failure("no answer") }

    static let session = URLSession(configuration: .ephemeral)
}
