import CLua
import Foundation
import LuaBridge
import MoonmockContract
import MoonmockCore
import MoonmockSchema

/// The host half of `mock.resource` (``Prelude/resourceSource``): declarations, key names and
/// body schemas.
extension ScriptGeneration {
    /// Seeds the collection at `path` again, in this generation's VM (after
    /// `DELETE /__moonmock/resources/{path}` forgot its items).
    public func seedResource(_ path: String) throws {
        guard let ref = resourceSeeders[path] else { return }
        let probe = RequestContext.probe(request: MockRequest(method: "GET", url: "http://localhost" + path), params: [:], engine: engine)
        _ = try call(ref, with: probe) { _ in () }
    }

    /// A chaos message without its `chaos: ` (the script's message names `mock.chaos` already).
    static func unprefixed(_ message: String) -> String { message.hasPrefix("chaos: ") ? String(message.dropFirst(7)) : message }

    func installResourceHost(_ H: Int32) {
        vm.setFunction("chaos", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                guard self.loading else { throw LuaError.host("chaos is declared while the script loads (switch it at runtime with PUT /__moonmock/chaos)") }
                do { self.chaosLayers.append(try ChaosPolicy(json: try self.json(at: 1, stack))) } catch let e as ChaosPolicy.Invalid { throw LuaError.host(Self.unprefixed(e.description)) }
            }
        }
        vm.setFunction("chaos_profile", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                let name = try stack.checkString(1, "name")
                guard !name.isEmpty else { throw LuaError.host("the profile needs a name") }
                guard self.chaosProfiles[name] == nil else { throw LuaError.host("profile '\(name)' is declared twice") }
                do { self.chaosProfiles[name] = try ChaosPolicy(json: try self.json(at: 2, stack)) } catch let e as ChaosPolicy.Invalid { throw LuaError.host(Self.unprefixed(e.description)) }
            }
        }
        // resource_declare(path, id_field) -> item prefix, version key, sequence key, seeded key
        vm.setFunction("resource_declare", in: H) { [unowned self] stack in
            let path = try stack.checkString(1, "path"), idField = try stack.checkString(2, "id_field")
            guard !self.resourceDeclarations.contains(where: { $0.path == path }) else {
                stack.pushNil(); stack.push("'\(path)' is declared twice"); return 2
            }
            self.resourceDeclarations.append(.init(path: path, idField: idField))
            let keys = ResourceRegistry.keys(for: path)
            for key in [keys.itemPrefix, keys.version, keys.sequence, keys.seeded] { stack.push(key) }
            return 4
        }
        // resource_wait(version key) -> the version once another VM or replica has seeded the
        // collection (at most 5 s; nil past it): a reader never sees half a seed.
        vm.setFunction("resource_wait", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
            while DispatchTime.now().uptimeNanoseconds < deadline {
                if case .integer(let v)? = try self.engine.state.get(key) { stack.push(v); return 1 }
                usleep(1000)
            }
            stack.pushNil()
            return 1
        }
        // resource_seeder(path, fn): what seeds the collection, run again after an admin reset
        vm.setFunction("resource_seeder", in: H) { [unowned self] stack in
            let path = try stack.checkString(1, "path")
            guard stack.isFunction(at: 2) else { throw LuaError.host("resource_seeder needs a function") }
            stack.pushValue(at: 2)
            self.resourceSeeders[path] = luaL_ref(stack.L, mm_registryindex())
            return 0
        }
        // resource_schema(table | file) -> number, or nil, message
        vm.setFunction("resource_schema", in: H) { [unowned self] stack in
            do {
                let schema: JSONSchema
                if stack.isTable(at: 1) {
                    schema = JSONSchema(try self.json(at: 1, stack))
                } else {
                    let path = try stack.checkString(1, "schema file")
                    let absolute = try self.existingFile(path)
                    let url = URL(fileURLWithPath: absolute)
                    let documents: SpecDocuments
                    do { documents = try SpecDocuments(root: url) } catch { throw LuaError.host(String(describing: error)) }
                    self.depend(on: absolute)
                    let loaded = documents.documents
                    schema = JSONSchema(documents.root.value, baseURI: url.absoluteString, loader: { loaded[$0] })
                }
                self.resourceSchemas.append(schema)
                stack.push(self.resourceSchemas.count)
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        // resource_check(number, value) -> nil when valid, else a list of "path: message"
        vm.setFunction("resource_check", in: H) { [unowned self] stack in
            let index = Int(try stack.checkInteger(1, "schema")) - 1
            guard self.resourceSchemas.indices.contains(index) else { throw LuaError.host("no such schema") }
            let errors = self.resourceSchemas[index].validate(try self.json(at: 2, stack), direction: .request)
            if errors.isEmpty { stack.pushNil(); return 1 }
            self.push(json: .array(errors.prefix(20).map(\.json)), stack)
            return 1
        }
    }
}
