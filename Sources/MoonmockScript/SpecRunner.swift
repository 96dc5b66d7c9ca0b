import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// Runs spec files against a script, the engine of `moonmock test`.
///
/// A spec is Lua with `test(name, fn)`, `request{...}`, `expect(v):equals(x)` / `:contains(t)` /
/// `:matches(p)`, `state`, `advance(ms)` and `reset()`. Every test gets a fresh engine with the
/// script loaded anew (fresh state, sequences and `times` budgets) and a clock that only moves
/// when the spec says so (`advance`, or the delay of an answer).
///
/// ```swift
/// let runner = SpecRunner(script: "mocks.lua")
/// let file = runner.run(specFile: "mocks_test.lua")
/// print(file.results.filter { $0.failure == nil }.count, "passed")
/// ```
public final class SpecRunner: @unchecked Sendable {
    /// One test's outcome.
    public struct Result: Sendable {
        public let name: String
        /// `spec_file:line` of the `test` call.
        public let location: String
        /// `nil` when it passed; else `spec_file:line: what failed` and, for an expectation, the diff.
        public let failure: String?
        public let seconds: Double
    }

    /// A spec file's outcome: its tests, or the error that kept it from loading.
    public struct FileResult: Sendable {
        public let file: String
        public let results: [Result]
        public let loadError: String?
    }

    /// The marker of an expectation's failure in a Lua error message (see ``SpecPrelude``).
    static let failureMarker = "\u{1}moonmock-expect\u{1}"

    public let scriptFile: String
    public let options: ScriptOptions
    /// The clock of the engine under test: it moves only when a spec moves it.
    final class Clock: Sendable {
        private let seconds = Locked(SpecRunner.startTime)
        func now() -> Double { seconds.withLock { $0 } }
        func advance(by s: Double) { seconds.withLock { $0 += s } }
        func reset() { seconds.withLock { $0 = SpecRunner.startTime } }
    }
    let clock = Clock()
    /// One store for the runner, flushed for each test: the spec's `state` is bound to it.
    let store: StateStore
    var engine: Engine?
    /// 2026-01-01T00:00:00Z: where the clock of every test starts.
    static let startTime = 1_767_225_600.0
    var pending: [(name: String, ref: Int32, location: String)] = []

    /// Specs every answer is checked against (`moonmock test --spec`): a test whose answers
    /// break one (or the script's own `mock.spec`) fails.
    public var contracts: [any ContractChecking] = []
    /// Keep the requests each test sent (``requests``): `moonmock drift` sends them again.
    public var collectRequests = false
    public private(set) var requests: [MockRequest] = []

    public init(script: String, options: ScriptOptions = ScriptOptions()) {
        scriptFile = script
        self.options = options
        store = StateStore(clock: clock.now)
    }

    /// A fresh engine with the script loaded; its clock is the runner's.
    func freshEngine() throws -> Engine {
        clock.reset()
        try store.flush()
        var environment = MockEnvironment.system
        environment.now = clock.now
        let engine = Engine(environment: environment, state: store)
        engine.setContracts(contracts, from: .commandLine)
        try engine.loadScript(file: scriptFile, options: options)
        return engine
    }

    /// Loads the script once to report its error before any test runs (`nil` when it loads).
    public func checkScript() -> String? {
        do { _ = try freshEngine(); return nil } catch { return String(describing: error) }
    }

    /// Runs every test of `specFile`, each on a fresh engine.
    public func run(specFile: String) -> FileResult {
        let url = URL(fileURLWithPath: specFile).standardizedFileURL
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return FileResult(file: specFile, results: [], loadError: "\(specFile): cannot read the spec file")
        }
        pending = []
        let spec: ScriptGeneration
        do {
            spec = try ScriptGeneration(displayName: url.lastPathComponent, baseDirectory: url.deletingLastPathComponent(),
                                        engine: Engine(), options: options)
            try spec.lock.withLock {
                try spec.installAPI()
                try installSpecAPI(spec)
                do { try spec.vm.load(Array(data), chunkName: "@" + url.lastPathComponent) } catch let error as LuaError { throw ScriptError.syntax(error.message) }
                spec.loading = true
                defer { spec.loading = false }
                do { try spec.vm.call(arguments: 0, results: 0) } catch let error as LuaError { throw ScriptError.load(error.message, traceback: error.traceback) }
            }
        } catch {
            return FileResult(file: specFile, results: [], loadError: String(describing: error))
        }
        var results: [Result] = []
        for test in pending {
            let started = DispatchTime.now().uptimeNanoseconds
            var failure: String?
            do {
                engine = try freshEngine()
                try spec.lock.withLock {
                    lua_rawgeti(spec.vm.state, mm_registryindex(), lua_Integer(test.ref))
                    try spec.vm.call(arguments: 0, results: 0)
                }
            } catch let error as LuaError {
                failure = Self.describe(error)
            } catch {
                failure = String(describing: error)
            }
            if failure == nil, let engine, let broken = Self.brokenAnswers(engine) { failure = broken }
            if collectRequests, let engine { requests += engine.journal.entries().map(\.request) }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            results.append(Result(name: test.name, location: test.location, failure: failure, seconds: seconds))
        }
        engine = nil
        return FileResult(file: specFile, results: results, loadError: nil)
    }

    /// The answers that broke a spec during a test, one line each; `nil` when none did. (A
    /// request that breaks it may be the test's point: an error path.)
    static func brokenAnswers(_ engine: Engine) -> String? {
        guard !engine.contractCheckers.isEmpty, case .array(let operations)? = engine.contractSummary()["operations"] else { return nil }
        var lines: [String] = []
        for operation in operations {
            guard case .array(let violations)? = operation["violations"] else { continue }
            for v in violations where v["direction"] == .string("response") {
                guard case .array(let errors)? = v["errors"] else { continue }
                for e in errors {
                    let at = e["instance_path"]?.stringValue ?? ""
                    lines.append("  \(operation["operation"]?.stringValue ?? "?"): \(at.isEmpty ? "" : at + ": ")\(e["message"]?.stringValue ?? "") (\(e["schema_path"]?.stringValue ?? ""))")
                }
            }
        }
        return lines.isEmpty ? nil : "an answer breaks the API's spec:\n" + lines.joined(separator: "\n")
    }

    /// An expectation's failure as `file:line: message`; any other error with its traceback.
    static func describe(_ error: LuaError) -> String {
        if let range = error.message.range(of: failureMarker) {
            let rest = error.message[range.upperBound...]
            let parts = rest.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)
            return parts.count == 2 ? "\(parts[0]): \(parts[1])" : String(rest)
        }
        let frames = (error.traceback ?? "").split(separator: "\n").filter { !$0.contains("[C]") && !$0.contains("moonmock") && !$0.hasPrefix("stack traceback") }
        return ([error.message] + frames.prefix(4).map { "    " + $0.trimmingCharacters(in: .whitespaces) }).joined(separator: "\n")
    }
}
