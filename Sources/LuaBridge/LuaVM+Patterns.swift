import CLua

extension LuaVM {
    /// Puts `string.find`, `match`, `gmatch` and `gsub` under the instruction budget. Lua matches
    /// patterns in C, where the budget's count hook never runs, so a badly backtracking pattern
    /// would hold the thread for as long as it takes. Each of the four first measures the match
    /// with `mm_pattern_within` (the same backtracking, counted) and refuses it, as a runaway
    /// loop is refused, when it needs more steps than the budget has instructions; then Lua's own
    /// function runs. Plain finds and patterns without special characters are not measured.
    func installPatternGuard() throws {
        let budget = Int64(limits.instructions)
        guard budget > 0 else { return }
        pushFunction { stack in
            let mode = Int32(stack.integer(at: 1) ?? 0)
            let name = mode == 0 ? "string.find" : mode == 1 ? "string.match" : mode == 2 ? "string.gmatch" : "string.gsub"
            // Arguments as the library reads them; anything else is left for it to refuse.
            guard let subject = Self.bytesArgument(stack, 2), let pattern = Self.bytesArgument(stack, 3) else { return 0 }
            if mode == 0 && stack.bool(at: 5) { return 0 }   // plain find
            if !pattern.contains(where: { Self.specials.contains($0) }) && mode == 0 { return 0 }
            var initial = 0
            if mode != 3, let given = stack.integer(at: 4) {
                let n = Int(given)
                initial = n > 0 ? n - 1 : n == 0 ? 0 : max(subject.count + n, 0)
            }
            let most = mode == 3 ? (stack.integer(at: 5).map { Int64($0) } ?? -1) : -1
            let scan: Int32 = mode <= 1 ? Int32(MM_PATTERN_FIRST) : mode == 2 ? Int32(MM_PATTERN_ALL) : Int32(MM_PATTERN_ALL_ANCHORED)
            let verdict = subject.withUnsafeBufferPointer { s in
                pattern.withUnsafeBufferPointer { p in
                    s.withMemoryRebound(to: CChar.self) { s in
                        p.withMemoryRebound(to: CChar.self) { p in
                            mm_pattern_within(s.baseAddress, s.count, p.baseAddress, p.count, initial, scan, most, budget)
                        }
                    }
                }
            }
            if verdict == Int32(MM_PATTERN_OVER) {
                let shown = String(decoding: pattern.prefix(60), as: UTF8.self)
                throw LuaError.host("\(name): the pattern '\(shown)' needs more than \(budget) steps on this \(subject.count)-byte "
                    + "string (it backtracks too much), so it was stopped like a runaway loop; anchor it or match less at a time")
            }
            return 0
        }
        // Handed over in a global that the prelude takes and clears.
        lua_setglobal(state, "__moonmock_pattern_guard")
        try evaluate(Self.patternGuardPrelude, chunkName: "=sandbox")
    }

    private static let specials: Set<UInt8> = Set("^$*+?.([%-".utf8)

    /// A string or number argument's bytes (numbers as Lua writes them), else `nil`.
    private static func bytesArgument(_ stack: LuaStack, _ index: Int32) -> [UInt8]? {
        switch lua_type(stack.L, index) {
        case LUA_TSTRING: return stack.bytes(at: index)
        case LUA_TNUMBER:
            lua_pushvalue(stack.L, index)
            defer { stack.pop() }
            return stack.bytes(at: -1)
        default: return nil
        }
    }

    /// The four wrappers, in Lua so that the library function runs in Lua's own frame (its errors
    /// and a gsub callback's stay Lua's). They replace the fields of the one string table, which
    /// is also what `("x"):find(...)` reaches.
    private static let patternGuardPrelude = """
    local guard = __moonmock_pattern_guard
    __moonmock_pattern_guard = nil
    local find, match, gmatch, gsub = string.find, string.match, string.gmatch, string.gsub
    string.find = function(s, p, ...) guard(0, s, p, ...); return find(s, p, ...) end
    string.match = function(s, p, ...) guard(1, s, p, ...); return match(s, p, ...) end
    string.gmatch = function(s, p, ...) guard(2, s, p, ...); return gmatch(s, p, ...) end
    string.gsub = function(s, p, r, ...) guard(3, s, p, nil, ...); return gsub(s, p, r, ...) end
    """
}
