import CLua
import Foundation
import LuaBridge
import MoonmockCore
import MoonmockImport
import MoonmockScript

/// The writers' fuzz targets: what a converter writes must always load.
extension FuzzTargets {
    /// A regex translated to a Lua pattern is one Lua accepts, and literal text stays itself.
    static func regexToLua(_ input: [UInt8]) {
        let regex = String(decoding: input.prefix(256), as: UTF8.self)
        guard let lua = RegexToLua.translate(regex, whole: true) else { return }
        let L = vm.state
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        lua_getglobal(L, "string")
        lua_getfield(L, -1, "find")
        _ = lua_pushstring(L, "")
        let bytes = Array(lua.utf8)   // binary-safe: a regex may hold a NUL
        bytes.withUnsafeBufferPointer { b in b.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) } }
        if mm_pcall(L, 2, 1, 0) != 0 {
            let message = String(cString: lua_tolstring(L, -1, nil))
            precondition(!message.contains("malformed") && !message.contains("missing") && !message.contains("invalid"),
                         "'\(regex)' became '\(lua)', which Lua refuses: \(message)")
        }
        if regex.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            precondition(lua == "^" + regex + "$", "'\(regex)' became '\(lua)'")
        }
    }

    /// Any document the OpenAPI reader takes (JSON or YAML) converts to a script that loads.
    static func openAPI(_ input: [UInt8]) {
        var options = ScriptWriter.Options(title: "fuzz")
        options.useFixtures = false
        guard let output = try? OpenAPIImporter.convert(Data(input), name: "fuzz.yaml", options: options) else { return }
        do { _ = try Engine().loadScript(source: output.script) } catch {
            preconditionFailure("a converted document does not load: \(error)\n\(output.script)")
        }
    }

    /// Any HAR file converts to a script that loads (every body inline).
    static func har(_ input: [UInt8]) {
        guard let (exchanges, notes) = try? HARImporter.read(Data(input), name: "fuzz.har") else { return }
        var options = ScriptWriter.Options(title: "fuzz")
        options.useFixtures = false
        let output = ScriptWriter(options: options).write(exchanges, notes: notes)
        do { _ = try Engine().loadScript(source: output.script) } catch {
            preconditionFailure("a converted HAR file does not load: \(error)\n\(output.script)")
        }
    }
}
