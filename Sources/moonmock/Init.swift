import Foundation
import MoonmockCore

/// `moonmock init [DIR]` (a small working mocks folder) and `moonmock types` (the LuaLS
/// annotations of the `mock` API).
enum Init {
    static let usage = """
    usage: moonmock init [DIR] [--force]

    Writes a small working mocks folder into DIR (default: the current folder): mocks.lua,
    fixtures/hello.json, mocks_test.lua (run it with: moonmock test DIR/mocks.lua),
    types/moonmock.lua with .luarc.json for the Lua language server, and .luacheckrc.
    Existing files are kept unless --force is given.

    options:
      --force      overwrite files that exist
      -h, --help   show this help
    """

    static let typesUsage = """
    usage: moonmock types [--write DIR | --path]

    The LuaLS annotations of the mock API (types/moonmock.lua).
      (no option)    print them
      --write DIR    write DIR/types/moonmock.lua and print its path
      --path         keep a copy for this version in the user's cache folder and print its folder
                     (for an editor's "workspace.library")
      -h, --help     show this help
    """

    static let files: [(path: String, text: String)] = [
        ("mocks.lua", """
        -- Rules are tried top to bottom; the first one that answers wins. Reference: docs/language.md
        mock.get("/hello", mock.file("fixtures/hello.json"))

        mock.get("/users/:id", function(req)
          return { id = tonumber(req.params.id), name = "User " .. req.params.id }
        end)

        -- fails twice, then succeeds (state is the host's: it survives reloads)
        mock.get("/flaky", function()
          local n = mock.state:incr("flaky")
          if n <= 2 then return mock.json({ attempt = n }, { status = 503 }) end
          return { ok = true }
        end)

        """),
        ("fixtures/hello.json", #"{ "message": "hello from moonmock" }"# + "\n"),
        ("mocks_test.lua", """
        -- Run with: moonmock test mocks.lua
        test("a fixture", function()
          local r = request{ url = "/hello" }
          expect(r.status):equals(200)
          expect(r.json):equals{ message = "hello from moonmock" }
        end)

        test("a path parameter", function()
          expect(request{ url = "/users/7" }.json):contains{ name = "User 7" }
        end)

        test("the flaky endpoint fails twice, then succeeds", function()
          expect(request{ url = "/flaky" }.status):equals(503)
          expect(request{ url = "/flaky" }.status):equals(503)
          expect(request{ url = "/flaky" }.json):equals{ ok = true }
          expect(state:get("flaky")):equals(3)
        end)

        """),
        (".luarc.json", """
        {
          "runtime.version": "Lua 5.4",
          "workspace.library": ["types"],
          "diagnostics.globals": ["mock", "test", "request", "expect", "state", "advance", "reset"]
        }

        """),
        (".luacheckrc", """
        -- luacheck settings for Moonmock scripts: the sandbox's globals.
        std = "lua54"
        read_globals = { "mock" }
        exclude_files = { "types/" }
        files["**/*_test.lua"] = { read_globals = { "mock", "test", "request", "expect", "state", "advance", "reset" } }

        """),
        ("types/moonmock.lua", LuaTypes.source),
    ]

    static func run(_ arguments: [String]) -> Int32 {
        var dir = "."
        var force = false
        var positional: [String] = []
        for arg in arguments {
            switch arg {
            case "-h", "--help": print(usage); return 0
            case "--force": force = true
            default:
                if arg.hasPrefix("-") { return MoonmockCLI.usageError(MoonmockCLI.unknownOption(arg, usage: usage), usage) }
                positional.append(arg)
            }
        }
        if positional.count > 1 { return MoonmockCLI.usageError("unexpected argument '\(positional[1])'", usage) }
        if let first = positional.first { dir = first }
        let root = URL(fileURLWithPath: dir)
        let fm = FileManager.default
        var kept: [String] = []
        for file in files {
            let url = root.appendingPathComponent(file.path)
            if fm.fileExists(atPath: url.path) && !force { kept.append(file.path); continue }
            do {
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try file.text.write(to: url, atomically: true, encoding: .utf8)
                print("wrote \(dir == "." ? file.path : (dir as NSString).appendingPathComponent(file.path))")
            } catch {
                MoonmockCLI.printError("moonmock: cannot write \(url.path): \(error.localizedDescription)")
                return 1
            }
        }
        if !kept.isEmpty { print("kept (exists; --force overwrites): " + kept.joined(separator: ", ")) }
        let script = dir == "." ? "mocks.lua" : (dir as NSString).appendingPathComponent("mocks.lua")
        print("next: moonmock test \(script)   and   moonmock serve \(script)")
        return 0
    }

    static func types(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case nil:
            FileHandle.standardOutput.write(Data(LuaTypes.source.utf8))
            return 0
        case "-h", "--help":
            print(typesUsage)
            return 0
        case "--write":
            guard arguments.count == 2 else { return MoonmockCLI.usageError("--write needs a folder", typesUsage) }
            return write(to: URL(fileURLWithPath: arguments[1]).appendingPathComponent("types"))
        case "--path":
            guard arguments.count == 1 else { return MoonmockCLI.usageError("unexpected argument '\(arguments[1])'", typesUsage) }
            let env = ProcessInfo.processInfo.environment
            let cache = env["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".cache")
            let folder = cache.appendingPathComponent("moonmock/types-\(MoonmockCLI.version)")
            return write(to: folder, quiet: true) == 0 ? { print(folder.path); return 0 }() : 1
        case let other?:
            return MoonmockCLI.usageError(MoonmockCLI.unknownOption(other, usage: typesUsage), typesUsage)
        }
    }

    private static func write(to folder: URL, quiet: Bool = false) -> Int32 {
        let file = folder.appendingPathComponent("moonmock.lua")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try LuaTypes.source.write(to: file, atomically: true, encoding: .utf8)
        } catch {
            MoonmockCLI.printError("moonmock: cannot write \(file.path): \(error.localizedDescription)")
            return 1
        }
        if !quiet { print(file.relativePath) }
        return 0
    }
}
