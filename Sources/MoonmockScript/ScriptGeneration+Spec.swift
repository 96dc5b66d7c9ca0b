import Foundation
import LuaBridge
import MoonmockContract
import MoonmockCore

extension ScriptGeneration {
    /// `mock.spec(path, { mode = "warn" | "enforce" })`: an OpenAPI spec (relative to the
    /// script) the engine checks requests and answers against while this generation serves.
    /// Every file the spec reaches is a dependency: a change reloads the script.
    func hostSpec(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) {
            let path = try stack.checkString(1, "path")
            let modeName = stack.isNil(at: 2) ? "warn" : try stack.checkString(2, "mode")
            guard let mode = OpenAPIContract.Mode(rawValue: modeName) else { throw LuaError.host("mode must be \"warn\" or \"enforce\", got \"\(modeName)\"") }
            let absolute = try existingFile(path)
            let contract: OpenAPIContract
            do { contract = try Self.specs.load(URL(fileURLWithPath: absolute), mode: mode) } catch { throw LuaError.host(String(describing: error)) }
            for document in contract.documentFiles { depend(on: document) }
            guard !specDeclarations.contains(where: { $0.file == contract.file && $0 !== contract }) else {
                throw LuaError.host("'\(path)' is declared twice")
            }
            specDeclarations.append(contract)
        }
    }

    /// `mock.openapi(path, { mode =, seed = })`: every operation of the spec served (examples,
    /// else bodies made from the schemas), below every rule the script writes; the spec is kept
    /// as by `mock.spec`.
    func hostOpenAPI(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) {
            let path = try stack.checkString(1, "path")
            let modeName = stack.isNil(at: 2) ? "warn" : try stack.checkString(2, "mode")
            guard let mode = OpenAPIContract.Mode(rawValue: modeName) else { throw LuaError.host("mode must be \"warn\" or \"enforce\", got \"\(modeName)\"") }
            let seed = stack.isNil(at: 3) ? 0 : try stack.checkInteger(3, "seed")
            var location = stack.isNil(at: 4) ? "" : (stack.string(at: 4) ?? "")
            if location.hasSuffix(": ") { location.removeLast(2) }
            let absolute = try existingFile(path)
            let contract: OpenAPIContract
            do { contract = try Self.specs.load(URL(fileURLWithPath: absolute), mode: mode) } catch { throw LuaError.host(String(describing: error)) }
            for document in contract.documentFiles { depend(on: document) }
            if !specDeclarations.contains(where: { $0 === contract }) { specDeclarations.append(contract) }
            registered += OpenAPIMock(contract: contract, seed: UInt64(bitPattern: seed)).rules(location: location.isEmpty ? nil : location)
        }
    }

    /// Specs read once per file version, shared by every VM of a pool (each runs the script).
    static let specs = SpecCache()
}

/// Parsed specs by path, mode and the files' modification times.
final class SpecCache: Sendable {
    private let cache = Locked<[String: (stamp: [Date], contract: OpenAPIContract)]>([:])

    func load(_ url: URL, mode: OpenAPIContract.Mode) throws -> OpenAPIContract {
        let key = url.path + "\u{0}" + mode.rawValue
        if let hit = cache.withLock({ $0[key] }), hit.stamp == Self.stamp(hit.contract.documentFiles) { return hit.contract }
        let contract = try OpenAPIContract(file: url, mode: mode)
        cache.withLock { $0[key] = (Self.stamp(contract.documentFiles), contract) }
        return contract
    }

    static func stamp(_ files: [String]) -> [Date] {
        files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date) ?? .distantPast }
    }
}
