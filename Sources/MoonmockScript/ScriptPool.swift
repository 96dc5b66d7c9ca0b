import Foundation
import MoonmockCore

/// Several VMs running the same script, for throughput on several cores (`--vms N`).
///
/// Each VM loads the script on its own; a request's handler runs on whichever VM is free.
/// Host state (`mock.state`, `mock.sequence` counters, the journal) is shared, but **Lua
/// locals and globals are per VM**: a handler that counts in a Lua upvalue counts per VM.
/// Keep cross-request state in `mock.state`. `when` predicates and `mock.match` run on the
/// first VM.
///
/// ```swift
/// let pool = try ScriptPool.load(file: "mocks.lua", engine: engine, count: 2)
/// engine.setScriptRules(pool.makeRuleSet())
/// ```
public final class ScriptPool: Sendable {
    public let generations: [ScriptGeneration]
    /// One flag per VM, claimed with a compare-and-swap: no lock on the request path.
    private let busy: [Slot]
    /// Requests waiting because every VM is busy, and where they wait. A request that finds a
    /// free VM touches neither (no shared counter on the request path).
    private let waiting = AtomicInt(0)
    private let freed = NSCondition()
    /// Round-robin start for threads that have no VM yet.
    private let nextSlot = AtomicInt(0)

    private final class Slot: Sendable {
        let taken = AtomicBool(false)
        /// Keeps each flag on a cache line of its own (threads on other VMs do not invalidate it).
        let padding: (Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0)
    }

    /// The first VM's generation: its rules, dependencies and load logs stand for the pool.
    public var primary: ScriptGeneration { generations[0] }

    private init(_ generations: [ScriptGeneration]) {
        self.generations = generations
        busy = generations.map { _ in Slot() }
    }

    /// Loads `count` VMs of the script at `file`. Throws ``ScriptError`` like a single load, or
    /// when the VMs disagree about the rules (a script whose rules depend on randomness at load).
    public static func load(file: String, engine: Engine, options: ScriptOptions = ScriptOptions(), count: Int) throws -> ScriptPool {
        let first = try ScriptGeneration.load(file: file, engine: engine, options: options)
        var generations = [first]
        for _ in 1..<max(1, count) {
            let g = try ScriptGeneration.load(file: file, engine: engine, options: options, sequenceHits: first.sequenceHits)
            guard g.rules.map(\.id) == first.rules.map(\.id) else {
                throw ScriptError.load("\(first.displayName): the script registers different rules each time it loads, so it cannot run on several VMs (use one VM)")
            }
            generations.append(g)
        }
        first.vmCount = generations.count
        return ScriptPool(generations)
    }

    /// Loads the script at `file` into `vms` VMs: exactly as many, or (``VMCount/automatic(max:)``)
    /// as many only when ``ScriptGeneration/checkSharing()`` finds that no answer can tell the
    /// VMs apart, and one otherwise. The primary generation's ``ScriptGeneration/sharing`` says
    /// which and why.
    ///
    /// ```swift
    /// let pool = try ScriptPool.load(file: "mocks.lua", engine: engine, vms: .automatic(max: 4))
    /// pool.generations.count   // 4, or 1 when a handler counts in a Lua local
    /// ```
    public static func load(file: String, engine: Engine, options: ScriptOptions = ScriptOptions(), vms: VMCount) throws -> ScriptPool {
        guard case .automatic(let most) = vms, most > 1 else { return try load(file: file, engine: engine, options: options, count: vms.most) }
        let first = try ScriptGeneration.load(file: file, engine: engine, options: options)
        let verdict = first.checkSharing()
        // Kept without its fingerprint, which may be megabytes for a script with much data.
        first.sharing = SharingVerdict(shareable: verdict.shareable, reason: verdict.reason, fingerprint: "")
        guard verdict.shareable else { return ScriptPool([first]) }
        // The other VMs load and check at once, a thread each: on many cores a reload then takes
        // about one load and check, not one per VM (each VM is a Lua state of its own).
        let sequenceHits = first.sequenceHits
        let others = Locked([Result<(ScriptGeneration, SharingVerdict), any Error>?](repeating: nil, count: most - 1))
        DispatchQueue.concurrentPerform(iterations: most - 1) { i in
            let loaded = Result { () throws -> (ScriptGeneration, SharingVerdict) in
                let g = try ScriptGeneration.load(file: file, engine: engine, options: options, sequenceHits: sequenceHits)
                return (g, g.checkSharing())
            }
            others.withLock { $0[i] = loaded }
        }
        var generations = [first]
        for loaded in others.withLock({ $0 }) {
            guard let loaded else { continue }
            let (g, other) = try loaded.get()
            guard g.rules.map(\.id) == first.rules.map(\.id), other == verdict else {
                // Loads that differ (randomness or ids at load): one VM, as the script was first loaded.
                first.sharing = SharingVerdict(shareable: false, reason: "\(first.displayName): each load of the script makes different values (random numbers, ids or times at load)", fingerprint: "")
                return ScriptPool([first])
            }
            generations.append(g)
        }
        first.vmCount = generations.count
        return ScriptPool(generations)
    }

    /// The rules of the first VM, each answering on whichever VM is free.
    public func makeRuleSet() -> RuleSet {
        guard generations.count > 1 else { return primary.makeRuleSet() }
        let rules = primary.rules.enumerated().map { index, rule in
            // A value responder runs in Swift: any thread may use the first VM's rule as is.
            guard primary.luaResponders.contains(ObjectIdentifier(rule)) else { return rule }
            return Rule(id: rule.id, method: rule.method, pattern: rule.pattern, predicates: rule.predicates, times: rule.times,
                 priority: rule.priority, location: rule.location, graphQLOperation: rule.graphQLOperation,
                 mayUseStore: rule.mayUseStore, storeWaits: rule.storeWaits, chaos: rule.chaos, answerCache: rule.answerCache,
                 liveStream: rule.liveStream) { [self] context in
                try withFreeVM { g in try g.rules[index].respond(context) }
            }
        }
        return RuleSet(rules, owner: self)
    }

    /// Runs `body` with a generation no other request is using. A thread keeps to the VM it
    /// used last while that VM is free, so that the VM's heap stays in that thread's core cache
    /// instead of moving between cores with every request.
    private func withFreeVM<T>(_ body: (ScriptGeneration) throws -> T) rethrows -> T {
        let preferred = PreferredSlot.get()
        // Modulo: the thread may have used a VM of another, larger pool last.
        let start = (preferred ?? nextSlot.add(1, ordering: .relaxed).oldValue) % busy.count
        let index = claim(from: start) ?? waitForVM(from: start)
        if index != preferred { PreferredSlot.set(index) }
        defer { release(index) }
        return try body(generations[index])
    }

    /// One pass over the VMs from `start`; the index claimed, or `nil` when all are busy.
    private func claim(from start: Int) -> Int? {
        for k in 0..<busy.count {
            let index = (start + k) % busy.count
            if busy[index].taken.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
                return index
            }
        }
        return nil
    }

    /// Every VM is busy: wait for one to be released.
    private func waitForVM(from start: Int) -> Int {
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        freed.lock()
        defer { freed.unlock() }
        while true {
            if let index = claim(from: start) { return index }
            // The timeout is a safety net only: release() signals under the same lock.
            _ = freed.wait(until: Date().addingTimeInterval(0.01))
        }
    }

    private func release(_ index: Int) {
        busy[index].taken.store(false, ordering: .sequentiallyConsistent)
        if waiting.load(ordering: .sequentiallyConsistent) > 0 {
            freed.lock()
            freed.signal()
            freed.unlock()
        }
    }
}

/// The VM index a thread used last, in a thread-specific slot (stored as index + 1).
private enum PreferredSlot {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static func get() -> Int? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Int(bitPattern: raw) - 1
    }

    static func set(_ index: Int) { pthread_setspecific(key, UnsafeRawPointer(bitPattern: index + 1)) }
}
