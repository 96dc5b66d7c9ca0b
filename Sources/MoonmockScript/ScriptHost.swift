import Foundation
import MoonmockCore

/// Owns a script file for an engine and reloads it: on demand, or on every save while
/// watching. A new generation replaces the old one only if it loads; requests in flight finish
/// on the generation they started on, and `mock.state` carries over (rule hit counters and
/// `times` budgets start again with each generation).
///
/// ```swift
/// let host = try ScriptHost(file: "mocks.lua", engine: engine)
/// try host.startWatching()        // reload on save, ~50 ms after the last write
/// print(host.status.generation)   // 1, 2, 3 …
/// ```
public final class ScriptHost: @unchecked Sendable {
    /// What the current generation is and how the last reload went.
    public struct Status: Sendable {
        public internal(set) var file: String
        /// 1 for the first load, +1 for every successful reload.
        public internal(set) var generation: Int
        /// Seconds since 1970 when the current generation was loaded.
        public internal(set) var loadedAt: Double
        public internal(set) var loadMilliseconds: Double
        public internal(set) var rules: Int
        /// The last failed reload's message (`mocks.lua:LINE: …`), cleared by a successful one.
        public internal(set) var lastError: String?
        /// Reloads that failed since the script was first loaded.
        public internal(set) var reloadFailures = 0
        public internal(set) var watching: Bool
        /// Lua VMs running the current generation.
        public internal(set) var vms: Int
        /// With `--vms auto`, why the current generation runs on one VM (`nil` when it is shared).
        public internal(set) var oneVMReason: String?

        public var json: JSONValue {
            var o: [String: JSONValue] = [
                "file": .string(file), "generation": .integer(Int64(generation)), "loaded_at": .double(loadedAt),
                "load_ms": .double((loadMilliseconds * 10).rounded() / 10), "rules": .integer(Int64(rules)),
                "watching": .bool(watching), "vms": .integer(Int64(vms)),
            ]
            if let oneVMReason { o["one_vm_reason"] = .string(oneVMReason) }
            o["last_error"] = lastError.map(JSONValue.string) ?? .null
            o["reload_failures"] = .integer(Int64(reloadFailures))
            return .object(o)
        }
    }

    /// The result of one reload.
    public struct Outcome: Sendable {
        public let ok: Bool
        /// `reloaded mocks.lua (gen 7, 3 ms)` or the error with `file:line`.
        public let message: String
        public internal(set) var generation: Int
    }

    public let file: String
    public let engine: Engine
    public let options: ScriptOptions
    public let vms: VMCount
    private let log: (@Sendable (String) -> Void)?
    private let loader: @Sendable () throws -> ScriptGeneration
    private let reloadLock = NSLock()
    private let state: Locked<(status: Status, current: ScriptGeneration)>
    private let watcherLock = NSLock()
    private var _watcher: FileWatcher?
    /// The watcher, read and written under its own lock (reloads run on the watcher's thread).
    private var watcher: FileWatcher? {
        get { watcherLock.withLock { _watcher } }
        set { watcherLock.withLock { _watcher = newValue } }
    }

    /// Loads `file` (throwing ``ScriptError`` when it does not load) and installs its rules.
    public convenience init(file: String, engine: Engine, options: ScriptOptions = ScriptOptions(), vms: VMCount = .exactly(1),
                            log: (@Sendable (String) -> Void)? = nil) throws {
        try self.init(file: file, engine: engine, options: options, vms: vms, log: log) {
            try engine.loadScript(file: file, options: options, vms: vms)
        }
    }

    /// Hosts a script given as text (with the folder its fixtures live in), e.g. the one-line
    /// script behind `moonmock serve --bundle DIR`; watching follows the files it reads.
    public convenience init(source: String, name: String, baseDirectory: String, engine: Engine,
                            options: ScriptOptions = ScriptOptions(), log: (@Sendable (String) -> Void)? = nil) throws {
        try self.init(file: name, engine: engine, options: options, vms: .exactly(1), log: log) {
            try engine.loadScript(source: source, name: name, baseDirectory: baseDirectory, options: options)
        }
    }

    private init(file: String, engine: Engine, options: ScriptOptions, vms: VMCount, log: (@Sendable (String) -> Void)?,
                 loader: @escaping @Sendable () throws -> ScriptGeneration) throws {
        self.file = file
        self.engine = engine
        self.options = options
        self.vms = vms
        self.log = log
        self.loader = loader
        let started = DispatchTime.now().uptimeNanoseconds
        let generation = try loader()
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        state = Locked((Status(file: generation.displayName, generation: 1, loadedAt: engine.environment.now(), loadMilliseconds: ms,
                              rules: generation.rules.count, lastError: nil, watching: false, vms: generation.vmCount,
                              oneVMReason: generation.sharing?.reason), generation))
    }

    deinit { _watcher?.stop() }

    public var status: Status { state.withLock { $0.status } }

    /// The generation serving now.
    public var current: ScriptGeneration { state.withLock { $0.current } }

    /// Loads the file again. On success the new rules replace the old at once; on failure the
    /// old generation keeps serving and the error is kept in ``status``.
    @discardableResult
    public func reload() -> Outcome {
        reloadLock.lock()
        defer { reloadLock.unlock() }
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let generation = try loader()
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            let now = engine.environment.now()
            let before = state.withLock { (vms: $0.status.vms, reason: $0.status.oneVMReason) }
            let number = state.withLock { s -> Int in
                s.status.generation += 1
                s.status.file = generation.displayName
                s.status.loadedAt = now
                s.status.loadMilliseconds = ms
                s.status.rules = generation.rules.count
                s.status.lastError = nil
                s.status.vms = generation.vmCount
                s.status.oneVMReason = generation.sharing?.reason
                s.current = generation
                return s.status.generation
            }
            engine.feed.publish(.reload(status.json))
            watcher?.watch(generation.dependencies)
            var message = "reloaded \(generation.displayName) (gen \(number), \(Int(ms.rounded())) ms)"
            // With automatic VMs a reload decides again: say so when the answer changed.
            if before.vms != generation.vmCount || before.reason != generation.sharing?.reason {
                message += generation.sharing?.reason.map { "; now one Lua VM, because \($0)" } ?? "; now \(generation.vmCount) Lua VMs"
            }
            log?(message)
            return Outcome(ok: true, message: message, generation: number)
        } catch {
            let text = String(describing: error)
            let number = state.withLock { s -> Int in
                s.status.lastError = text
                s.status.reloadFailures += 1
                return s.status.generation
            }
            engine.feed.publish(.reload(status.json))
            // Keep watching what the failed version would have needed as well (a new module the
            // broken version requires may be the fix).
            let scriptFile = URL(fileURLWithPath: file).standardizedFileURL.path
            watcher?.watch(FileManager.default.fileExists(atPath: scriptFile) ? current.dependencies.union([scriptFile]) : current.dependencies)
            log?("reload failed, still serving gen \(number): \(text)")
            return Outcome(ok: false, message: text, generation: number)
        }
    }

    /// Reloads whenever the script, a module it required or a fixture it read changes.
    public func startWatching(debounce: Double = 0.05) throws {
        guard watcher == nil else { return }
        let newWatcher = try FileWatcher(debounce: debounce) { [weak self] _ in self?.reload() }
        newWatcher.watch(current.dependencies)
        watcher = newWatcher
        state.withLock { $0.status.watching = true }
    }

    /// Stops reloading on changes.
    public func stopWatching() {
        let old = watcherLock.withLock { () -> FileWatcher? in
            defer { _watcher = nil }
            return _watcher
        }
        old?.stop()
    }
}
