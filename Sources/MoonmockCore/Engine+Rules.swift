
/// Rules (script and runtime) and the journal and reset that go with them: the admin side of
/// the engine; requests read ``sets`` through their lane's snapshot.
extension Engine {
    /// Replaces the script rules (a new script generation) in one step.
    public func setScriptRules(_ rules: RuleSet) { updateSets { $0 = RuleSets(runtime: $0.runtime, script: rules) } }

    /// Changes the rule sets and tells every thread's lane to read them again.
    func updateSets<T>(_ body: (inout RuleSets) -> T) -> T {
        defer { feed.publish(.rules) }
        return sets.withLock { sets in
            defer { version.add(1, ordering: .releasing) }
            return body(&sets)
        }
    }

    /// The current script rules.
    public var scriptRuleSet: RuleSet { sets.withLock { $0.script } }

    /// Adds a runtime rule; runtime rules are tried before script rules, newest first.
    public func add(_ rule: Rule) {
        updateSets { $0 = RuleSets(runtime: RuleSet([rule] + $0.runtime.rules), script: $0.script) }
    }

    /// Removes one runtime rule; returns whether it was there.
    @discardableResult
    public func remove(_ rule: Rule) -> Bool {
        updateSets { sets in
            let kept = sets.runtime.rules.filter { $0 !== rule }
            defer { sets = RuleSets(runtime: RuleSet(kept), script: sets.script) }
            return kept.count != sets.runtime.rules.count
        }
    }

    /// Removes every runtime rule.
    public func removeRuntimeRules() { updateSets { $0 = RuleSets(runtime: .empty, script: $0.script) } }

    /// Removes the runtime rules `drop` picks; returns how many went.
    @discardableResult
    public func removeRuntimeRules(where drop: (Rule) -> Bool) -> Int {
        updateSets { sets in
            let kept = sets.runtime.rules.filter { !drop($0) }
            defer { sets = RuleSets(runtime: RuleSet(kept), script: sets.script) }
            return sets.runtime.rules.count - kept.count
        }
    }

    /// Adds runtime rules in one step, replacing those `replacing` picks: the first of `rules`
    /// is tried first, and all of them before the runtime rules added earlier.
    public func add(_ rules: [Rule], replacing: (Rule) -> Bool) {
        updateSets { $0 = RuleSets(runtime: RuleSet(rules + $0.runtime.rules.filter { !replacing($0) }), script: $0.script) }
    }

    /// The runtime rules in evaluation order (newest first).
    public var runtimeRules: [Rule] { sets.withLock { $0.runtime.rules } }

    /// Every rule in evaluation order: runtime rules, then script rules.
    public var allRules: [Rule] { sets.withLock { $0.runtime.rules + $0.script.rules } }

    /// Clears runtime rules, the journal and the state, and puts every rule back on its default
    /// variant; with a shared store, its counters and switches too (throws when it is away).
    public func reset() throws {
        removeRuntimeRules()
        try clearJournal()
        try state.flush()
        variants.reset()
        sequenceCounts.reset()
        try store?.reset()
    }

    /// Empties the journal (the shared one too) and tells watchers so.
    public func clearJournal() throws {
        journal.clear()
        contractLedger.clear()
        try store?.clearJournal()
        feed.publish(.journalCleared)
    }

    /// The journal: every replica's when they share a store (throws when it is away), else this engine's.
    public func journalEntries() throws -> [JournalEntry] {
        if let store { return try store.journalEntries() }
        return journal.entries()
    }
}
