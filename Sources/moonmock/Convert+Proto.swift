import Foundation
import MoonmockCore
import MoonmockProto
import MoonmockScript

/// `moonmock convert proto FILE.proto... [--include DIR]... [--out DIR]`: a mocks.lua with
/// `mock.proto` and one `mock.grpc` rule per method, answering an example message (a stream of
/// two for server streaming, one per message for bidirectional calls).
enum ConvertProto {
    static func run(_ arguments: [String]) -> Int32 {
        var files: [String] = [], includes: [String] = []
        var out: String?
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--include" || arg == "--out" {
                guard i + 1 < arguments.count else { return MoonmockCLI.usageError("\(arg) needs a folder", MoonmockCLI.convertUsage) }
                if arg == "--out" { out = arguments[i + 1] } else { includes.append(arguments[i + 1]) }
                i += 2
                continue
            }
            if arg.hasPrefix("-") { return MoonmockCLI.usageError("unexpected argument '\(arg)'", MoonmockCLI.convertUsage) }
            files.append(arg)
            i += 1
        }
        guard !files.isEmpty else { return MoonmockCLI.usageError("missing FILE.proto", MoonmockCLI.convertUsage) }
        let schema: ProtoSchema
        do {
            let cwd = FileManager.default.currentDirectoryPath
            func absolute(_ p: String) -> String { p.hasPrefix("/") ? p : cwd + "/" + p }
            schema = try ProtoFiles.load(files.map(absolute), includes: includes.map(absolute))
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
        let script = self.script(schema, files: files, includes: includes)
        guard let out else {
            print(script, terminator: "")
            return 0
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            try Data(script.utf8).write(to: URL(fileURLWithPath: out).appendingPathComponent("mocks.lua"))
            print("moonmock: wrote \(out)/mocks.lua (\(schema.methodPaths.count) methods)")
            return 0
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
    }

    static func script(_ schema: ProtoSchema, files: [String], includes: [String]) -> String {
        let codec = ProtoCodec(schema)
        let list = files.count == 1 ? LuaLiteral.string(files[0]) : "{ " + files.map(LuaLiteral.string).joined(separator: ", ") + " }"
        let include = includes.isEmpty ? "" : ", { include = { " + includes.map(LuaLiteral.string).joined(separator: ", ") + " } }"
        var out = """
        -- Converted by `moonmock convert proto \(files.joined(separator: " "))`: one rule per method, each answering
        -- an example message. Edit the answers; docs/grpc.md has the rest (errors, metadata, deadlines).
        mock.proto(\(list)\(include))

        """
        for path in schema.methodPaths where !path.hasPrefix("grpc.health.v1.") {
            guard let method = schema.method(path) else { continue }
            let answer = LuaLiteral.value(codec.example(method.output), indent: "  ")
            out += "\n-- \(method.kind.replacingOccurrences(of: "_", with: " ")): \(method.input) → \(method.output)\n"
            switch (method.clientStreaming, method.serverStreaming) {
            case (false, false):
                out += "mock.grpc(\(LuaLiteral.string(path)), function(req)\n  return \(answer)\nend)\n"
            case (false, true):
                out += "mock.grpc(\(LuaLiteral.string(path)), function(req)\n  local message = \(answer)\n"
                    + "  return mock.stream({ message, message }, { interval = 100 })\nend)\n"
            case (true, false):
                out += "mock.grpc(\(LuaLiteral.string(path)), function(req)   -- req.messages: every message the client sent\n"
                    + "  return \(answer)\nend)\n"
            case (true, true):
                out += "mock.grpc(\(LuaLiteral.string(path)), { on_message = function(call, msg)\n"
                    + "  call:send(\(answer))\nend })\n"
            }
        }
        return out
    }
}
