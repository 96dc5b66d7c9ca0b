import CLua
import Foundation
import LuaBridge
import MoonmockContract
import MoonmockCore

/// The host half of `mock.fake` and `mock.schema` (``Prelude/fakeSource``).
extension ScriptGeneration {
    func installFakeHost(_ H: Int32) {
        vm.setFunction("fake", in: H) { [unowned self] stack in
            do { return try self.hostFake(stack) } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("fake_pick", in: H) { [unowned self] stack in
            let n = Int(try stack.checkInteger(1, "list length"))
            if stack.isNil(at: 2) {
                stack.push(self.withDefaultFake { $0.random.below(n) } + 1)
                return 1
            }
            var random = SeededRandom(seed: UInt64(bitPattern: try stack.checkInteger(2, "state")))
            stack.push(random.below(n) + 1)
            stack.push(Int64(bitPattern: random.state))
            return 2
        }
        vm.setFunction("fake_seed", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            if !stack.isNil(at: 2) {
                let name = try stack.checkString(2, "locale")
                guard FakeLocale(named: name) != nil else { stack.pushNil(); stack.push("no locale '\(name)' (en, de, fr, es, ja)"); return 2 }
            }
            stack.push(Int64(bitPattern: self.fakeSeed(key)))
            return 1
        }
        vm.setFunction("fake_override", in: H) { [unowned self] stack in
            self.fakeOverride = stack.isNil(at: 1) ? nil : Fake(seed: self.fakeSeed(try stack.checkString(1, "key")), now: self.engine.environment.now())
            return 0
        }
        vm.setFunction("schema", in: H) { [unowned self] stack in
            do { return try self.hostSchema(stack) } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
    }

    /// A key's stream: the same for the same key and `--seed` on every replica and machine.
    func fakeSeed(_ key: String) -> UInt64 { SeededRandom.mix(engine.environment.seed, SeededRandom.seed(key)) }

    /// The generator `mock.fake.*` draws from: a resource's seeding stream, else the request's,
    /// else the load's.
    func withDefaultFake<R>(_ body: (inout Fake) throws -> R) rethrows -> R {
        if fakeOverride != nil { return try body(&fakeOverride!) }
        if let current { return try body(&current.fake) }
        if loadFake == nil { loadFake = Fake(seed: fakeSeed("load:" + displayName), now: engine.environment.now()) }
        return try body(&loadFake!)
    }

    /// `fake(kind number, opts, state, locale)`: the value (and the new state of a seeded generator).
    private func hostFake(_ stack: LuaStack) throws -> Int32 {
        let index = Int(try stack.checkInteger(1, "kind")) - 1
        guard Fake.Kind.allCases.indices.contains(index) else { throw LuaError.host("no such kind") }
        let kind = Fake.Kind.allCases[index]
        var arguments: [String: JSONValue] = [:]
        var locale: FakeLocale?
        if stack.isTable(at: 2) {
            arguments = try scalarOptions(at: 2, stack)
            if let name = arguments.removeValue(forKey: "locale") {
                guard let l = name.stringValue.flatMap(FakeLocale.init(named:)) else { throw LuaError.host("no locale '\(name.stringValue ?? "?")' (en, de, fr, es, ja)") }
                locale = l
            }
        }
        if stack.isNil(at: 3) {
            let value = try withDefaultFake { fake -> JSONValue in
                guard let locale, locale != fake.locale else { return try fake.value(kind, arguments) }
                let kept = fake.locale
                fake.locale = locale
                defer { fake.locale = kept }
                return try fake.value(kind, arguments)
            }
            pushFake(value, stack)
            return 1
        }
        var fake = Fake(seed: 0, locale: locale ?? stack.string(at: 4).flatMap(FakeLocale.init(named:)) ?? .en, now: engine.environment.now())
        fake.random.state = UInt64(bitPattern: try stack.checkInteger(3, "state"))
        pushFake(try fake.value(kind, arguments), stack)
        stack.push(Int64(bitPattern: fake.random.state))
        return 2
    }

    private func pushFake(_ value: JSONValue, _ stack: LuaStack) {
        if case .string(let s) = value { stack.push(s) } else { push(json: value, stack) }
    }

    /// A table of options with string keys and scalar values (`{ min = 1, max = 9 }`).
    func scalarOptions(at t: Int32, _ stack: LuaStack) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        let L = stack.L
        let table = stack.absolute(t)
        lua_pushnil(L)
        while lua_next(L, table) != 0 {
            defer { stack.pop() }
            guard stack.type(at: -2) == LUA_TSTRING, let key = stack.string(at: -2) else { continue }
            switch stack.type(at: -1) {
            case LUA_TNUMBER:
                out[key] = lua_isinteger(L, -1) != 0 ? .integer(lua_tointegerx(L, -1, nil)) : .double(stack.number(at: -1) ?? 0)
            case LUA_TSTRING: out[key] = .string(stack.string(at: -1) ?? "")
            case LUA_TBOOLEAN: out[key] = .bool(stack.bool(at: -1))
            default: throw LuaError.host("option '\(key)' must be a number, a string or a boolean, got \(stack.typeName(at: -1))")
            }
        }
        return out
    }

    /// `schema(table | file, seed_key, locale)`: a value the schema accepts, with plausible
    /// strings; seeded by the key when given, else by the request's fake stream.
    private func hostSchema(_ stack: LuaStack) throws -> Int32 {
        let prepared: PreparedSchema
        if stack.isTable(at: 1) {
            let pointer = lua_topointer(stack.L, 1)!
            if let cached = tableSchemas[pointer] {
                prepared = cached.schema
            } else {
                prepared = PreparedSchema(SpecDocuments(value: try json(at: 1, stack), uri: "file:///mock.schema.json"))
                if tableSchemas.count >= 512 {
                    for entry in tableSchemas.values { luaL_unref(stack.L, mm_registryindex(), entry.ref) }
                    tableSchemas.removeAll()
                }
                // Referenced, so the table is never collected and its address never reused.
                stack.pushValue(at: 1)
                tableSchemas[pointer] = (luaL_ref(stack.L, mm_registryindex()), prepared)
            }
        } else {
            let path = try stack.checkString(1, "schema file")
            if let cached = fileSchemas[path] {
                prepared = cached
            } else {
                let absolute = try existingFile(path)
                let documents: SpecDocuments
                do { documents = try SpecDocuments(root: URL(fileURLWithPath: absolute)) } catch { throw LuaError.host(String(describing: error)) }
                for document in documents.documents.keys { if let url = URL(string: document), url.isFileURL { depend(on: url.path) } }
                prepared = PreparedSchema(documents)
                fileSchemas[path] = prepared
            }
        }
        var locale = FakeLocale.en
        if !stack.isNil(at: 3) {
            let name = try stack.checkString(3, "locale")
            guard let l = FakeLocale(named: name) else { throw LuaError.host("no locale '\(name)' (en, de, fr, es, ja)") }
            locale = l
        }
        let seed = stack.isNil(at: 2) ? withDefaultFake { $0.random.next() } : fakeSeed(try stack.checkString(2, "seed_key"))
        var fake = Fake(seed: SeededRandom.mix(seed, 1), locale: locale, now: engine.environment.now())
        if let plan = prepared.plan {
            var random = SeededRandom(seed: seed)
            push(json: plan.sample(&random, &fake), stack)
        } else {
            var sampler = SchemaSampler(documents: prepared.documents, direction: .response, seed: seed, useExamples: false)
            sampler.fake = fake
            push(json: sampler.sample(prepared.documents.root), stack)
        }
        return 1
    }
}

/// A `mock.schema` schema as read once: its documents, and its plan when it has one.
struct PreparedSchema {
    let documents: SpecDocuments
    let plan: SchemaPlan?
    init(_ documents: SpecDocuments) {
        self.documents = documents
        plan = SchemaPlan(documents.root, documents: documents)
    }
}
