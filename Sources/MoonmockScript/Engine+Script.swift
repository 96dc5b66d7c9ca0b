import MoonmockCore

extension Engine {
    /// Loads a `mocks.lua` and makes its rules the engine's script rules.
    ///
    /// ```swift
    /// let engine = Engine()
    /// try engine.loadScript(file: "mocks.lua")
    /// engine.handle(MockRequest(method: "GET", url: "http://localhost/users/7")).response.status
    /// ```
    @discardableResult
    public func loadScript(file: String, options: ScriptOptions = ScriptOptions()) throws -> ScriptGeneration {
        let generation = try ScriptGeneration.load(file: file, engine: self, options: options)
        install(generation, generation.makeRuleSet())
        return generation
    }

    /// Loads a script into `vms` Lua VMs (see ``ScriptPool``) and makes its rules the engine's
    /// script rules. With one VM this is ``loadScript(file:options:)``.
    ///
    /// ```swift
    /// try engine.loadScript(file: "mocks.lua", vms: 2)   // Lua locals are per VM
    /// ```
    @discardableResult
    public func loadScript(file: String, options: ScriptOptions = ScriptOptions(), vms: Int) throws -> ScriptGeneration {
        guard vms > 1 else { return try loadScript(file: file, options: options) }
        let pool = try ScriptPool.load(file: file, engine: self, options: options, count: vms)
        install(pool.primary, pool.makeRuleSet())
        return pool.primary
    }

    /// Loads a script into as many VMs as `vms` allows (see ``ScriptPool/load(file:engine:options:vms:)``)
    /// and makes its rules the engine's script rules.
    ///
    /// ```swift
    /// let g = try engine.loadScript(file: "mocks.lua", vms: .automatic(max: 2))
    /// g.vmCount            // 2, or 1 with g.sharing?.reason saying why
    /// ```
    @discardableResult
    public func loadScript(file: String, options: ScriptOptions = ScriptOptions(), vms: VMCount) throws -> ScriptGeneration {
        let pool = try ScriptPool.load(file: file, engine: self, options: options, vms: vms)
        install(pool.primary, pool.makeRuleSet())
        return pool.primary
    }

    /// Loads a script from text; see ``loadScript(file:options:)``.
    @discardableResult
    public func loadScript(source: String, name: String = "mocks.lua", baseDirectory: String? = nil,
                           options: ScriptOptions = ScriptOptions()) throws -> ScriptGeneration {
        let generation = try baseDirectory.map {
            try ScriptGeneration.load(source: source, name: name, baseDirectory: $0, engine: self, options: options)
        } ?? ScriptGeneration.load(source: source, name: name, engine: self, options: options)
        install(generation, generation.makeRuleSet())
        return generation
    }

    /// Makes a loaded generation the one serving: its rules, then its variants (keeping
    /// runtime choices whose names still exist).
    func install(_ generation: ScriptGeneration, _ rules: RuleSet) {
        variants.declare(generation.variantDeclarations)
        bundles.declare(generation.bundleDeclarations)
        resources.declare(generation.resourceDeclarations) { [weak generation] path in try generation?.seedResource(path) }
        chaos.declare(layers: generation.chaosLayers, profiles: generation.chaosProfiles)
        cors = generation.corsDeclaration
        setContracts(generation.specDeclarations, from: .script)
        setScriptRules(rules)
    }
}
