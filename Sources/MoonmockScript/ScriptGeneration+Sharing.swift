import CLua
import LuaBridge

/// What ``ScriptGeneration/checkSharing()`` found.
public struct SharingVerdict: Sendable, Equatable {
    /// Whether the script may run on several VMs with the same answers as on one.
    public let shareable: Bool
    /// Why not: `mocks.lua:12: assigns the variable 'count', …`; `nil` when shareable.
    public let reason: String?
    /// What the script made at load, in a canonical form: VMs whose loads differ are not shared.
    let fingerprint: String
}

extension ScriptGeneration {
    /// Checks whether this generation's per-request code can run on several VMs (see
    /// ``SharingCheck``).
    ///
    /// ```swift
    /// let g = try ScriptGeneration.load(source: "local n = 0\nmock.get('/n', function() n = n + 1; return n end)", engine: Engine())
    /// g.checkSharing().reason   // "mocks.lua:2: assigns the variable 'n', kept from the script's load; …"
    /// ```
    public func checkSharing() -> SharingVerdict {
        lock.withLock {
            let L = vm.state
            let top = lua_gettop(L)
            defer { lua_settop(L, top) }
            let limits = vm.limits
            vm.limits.instructions = 0   // the check's own work is bounded by its budgets
            defer { vm.limits = limits }
            // Finalizers of what the load left as garbage run now, in every VM alike, not at
            // some later collection of one VM.
            _ = mm_gc_collect(L)
            guard lua_checkstack(L, 12) != 0 else { return SharingVerdict(shareable: false, reason: "no room on the Lua stack", fingerprint: "") }
            do {
                try vm.load(SharingCheck.source, chunkName: SharingCheck.chunkName)
            } catch {
                return SharingVerdict(shareable: false, reason: "the check does not compile: \(error)", fingerprint: "")
            }
            let registry = mm_registryindex()
            // The check runs with the pristine globals as its _ENV: nothing the script replaced.
            lua_getfield(L, registry, SharingCheck.pristineKey)
            guard lua_setupvalue(L, -2, 1) != nil else {
                return SharingVerdict(shareable: false, reason: "the check has no environment", fingerprint: "")
            }
            lua_createtable(L, Int32(clamping: perRequestFunctions.count), 0)
            for (i, ref) in perRequestFunctions.enumerated() {
                lua_rawgeti(L, registry, lua_Integer(ref))
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
            lua_rawgeti(L, registry, lua_Integer(LUA_RIDX_GLOBALS))
            lua_getfield(L, registry, SharingCheck.pristineKey)
            lua_rawgeti(L, registry, lua_Integer(refs.requestMeta))
            lua_getfield(L, registry, LuaVM.dumpRegistryKey)
            lua_getfield(L, registry, LuaVM.debugRegistryKey)
            let debug = lua_gettop(L)
            lua_getfield(L, debug, "getupvalue")
            lua_getfield(L, debug, "getmetatable")
            lua_getfield(L, debug, "getinfo")
            lua_rotate(L, debug, -1)
            lua_settop(L, -2)   // the debug table
            do {
                try vm.call(arguments: 8, results: 2)
            } catch {
                return SharingVerdict(shareable: false, reason: "the check failed: \(error)", fingerprint: "")
            }
            let stack = vm.stack
            if stack.bool(at: -2) {
                return SharingVerdict(shareable: true, reason: nil, fingerprint: stack.string(at: -1) ?? "")
            }
            return SharingVerdict(shareable: false, reason: stack.string(at: -1) ?? "the check gave no reason", fingerprint: "")
        }
    }
}
