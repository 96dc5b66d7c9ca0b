import Foundation
import MoonmockCore
import Synchronization

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
    private let slots: Mutex<Slots>
    private let available: DispatchSemaphore

    /// Which VMs are in use, and the VM each thread used last. A thread keeps to its VM while
    /// it is free, so that the VM's heap stays in that thread's core cache instead of moving
    /// between cores with every request.
    private struct Slots {
        var busy: [Bool]
        var preferred: [UInt: Int] = [:]
        var assigned = 0
    }

    /// The first VM's generation: its rules, dependencies and load logs stand for the pool.
    public var primary: ScriptGeneration { generations[0] }

    private init(_ generations: [ScriptGeneration]) {
        self.generations = generations
        slots = Mutex(Slots(busy: Array(repeating: false, count: generations.count)))
        available = DispatchSemaphore(value: generations.count)
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
        return ScriptPool(generations)
    }

    /// The rules of the first VM, each answering on whichever VM is free.
    public func makeRuleSet() -> RuleSet {
        guard generations.count > 1 else { return primary.makeRuleSet() }
        let rules = primary.rules.enumerated().map { index, rule in
            Rule(id: rule.id, method: rule.method, pattern: rule.pattern, predicates: rule.predicates, times: rule.times,
                 priority: rule.priority, location: rule.location, graphQLOperation: rule.graphQLOperation) { [self] context in
                try withFreeVM { g in try g.rules[index].respond(context) }
            }
        }
        return RuleSet(rules, owner: self)
    }

    /// Runs `body` with a generation no other request is using.
    private func withFreeVM<T>(_ body: (ScriptGeneration) throws -> T) rethrows -> T {
        available.wait()
        let thread = UInt(pthread_self())   // pthread_t is an integer on Linux
        let index = slots.withLock { s in
            let wanted: Int
            if let p = s.preferred[thread] {
                wanted = p
            } else {
                wanted = s.assigned % s.busy.count
                s.assigned += 1
                if s.preferred.count < 1024 { s.preferred[thread] = wanted }
            }
            // The semaphore guarantees that some VM is free.
            let i = s.busy[wanted] ? s.busy.firstIndex(of: false)! : wanted
            s.busy[i] = true
            return i
        }
        defer {
            slots.withLock { $0.busy[index] = false }
            available.signal()
        }
        return try body(generations[index])
    }
}
