import Foundation
import MoonmockCore

/// `moonmock convert bundle DIR` and `moonmock convert stubs DIR --endpoint NAME=PATTERN...`:
/// print a mocks.lua that behaves like the folder and leaves its files where they are.
enum Convert {
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("-h") || arguments.contains("--help") { print(MoonmockCLI.convertUsage); return 0 }
        if let kind = arguments.first, ["har", "wiremock", "openapi"].contains(kind) { return ConvertImport.run(kind, Array(arguments.dropFirst())) }
        if arguments.first == "proto" { return ConvertProto.run(Array(arguments.dropFirst())) }
        guard let kind = arguments.first, kind == "bundle" || kind == "stubs" else {
            return MoonmockCLI.usageError(arguments.isEmpty ? "missing what to convert (har, openapi, wiremock, proto, bundle or stubs)" : "cannot convert '\(arguments[0])'",
                                          MoonmockCLI.convertUsage)
        }
        var dir: String?
        var endpoints: [(String, String)] = []
        var i = 1
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--endpoint", kind == "stubs" {
                guard i + 1 < arguments.count, let eq = arguments[i + 1].firstIndex(of: "="), eq != arguments[i + 1].startIndex else {
                    return MoonmockCLI.usageError("--endpoint needs NAME=\"METHOD /pattern\"", MoonmockCLI.convertUsage)
                }
                let spec = arguments[i + 1]
                endpoints.append((String(spec[..<eq]), String(spec[spec.index(after: eq)...])))
                i += 2
                continue
            }
            if arg.hasPrefix("-") || dir != nil { return MoonmockCLI.usageError("unexpected argument '\(arg)'", MoonmockCLI.convertUsage) }
            dir = arg
            i += 1
        }
        guard var folder = dir else { return MoonmockCLI.usageError("missing DIR", MoonmockCLI.convertUsage) }
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        if folder.hasPrefix("/") || folder.split(separator: "/").contains("..") {
            return MoonmockCLI.usageError("give DIR relative to the folder the script will live in (no absolute paths, no '..'): "
                                          + "run convert from that folder", MoonmockCLI.convertUsage)
        }
        if kind == "stubs" && endpoints.isEmpty {
            return MoonmockCLI.usageError("stubs need at least one --endpoint NAME=\"METHOD /pattern\"", MoonmockCLI.convertUsage)
        }
        do {
            print(kind == "bundle" ? try bundleScript(folder) : stubsScript(folder, endpoints), terminator: "")
            return 0
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
    }

    /// One `mock.route` per entry, in order, with the query rules of the format spelled out.
    static func bundleScript(_ folder: String) throws -> String {
        let bundle = try MockBundle(directory: URL(fileURLWithPath: folder))
        var out = """
        -- Converted by `moonmock convert bundle \(folder)` from \(folder)/bundle.json.
        -- Save it in the folder you ran the command from: fixture paths are relative to it.
        -- The first matching rule wins, as the first matching entry did.

        -- Mock-Bundle query rules: every query item must be declared (declared ones may be missing),
        -- false means any value, and a request without a query matches only entries without parameters.
        local function bundle_query(declared)
          return function(req)
            local any = false
            for name, values in pairs(req.query_all) do
              any = true
              local want = declared[name]
              if want == nil then return false end
              if want ~= false and values[1] ~= want then return false end
            end
            return any == (next(declared) ~= nil)
          end
        end


        """
        for entry in bundle.entries {
            let url = "://\(entry.host)\(entry.port.map { ":\($0)" } ?? "")\(entry.path)"
            let declared = entry.parameters.sorted { $0.key < $1.key }
                .map { "[\(lua($0.key))] = \($0.value.map(lua) ?? "false")" }.joined(separator: ", ")
            var options: [String] = ["status = \(entry.response.status)"]
            var headers = entry.response.headers.fields.filter { !$0.name.equalsIgnoringASCIICase("content-type") }
            if let mime = entry.mimeType {
                headers.append((name: "Content-Type", value: mime))
            } else if entry.file != nil && !headers.contains(where: { $0.name.equalsIgnoringASCIICase("content-type") }) {
                headers.append((name: "Content-Type", value: "application/octet-stream"))   // as the bundle serves it
            }
            if !headers.isEmpty {
                options.append("headers = { " + headers.map { "[\(lua($0.name))] = \(lua($0.value))" }.joined(separator: ", ") + " }")
            }
            let respond = entry.file.map { "mock.file(\(lua(folder + "/" + $0)), { \(options.joined(separator: ", ")) })" }
                ?? "mock.status(\(entry.response.status), nil, { \(options.dropFirst().joined(separator: ", ")) })"
            out += "mock.route { method = \(lua(entry.method)), url = \(lua(url)), when = bundle_query({ \(declared) }),\n"
            out += "  respond = \(respond) }\n"
        }
        return out
    }

    /// The folder as `mock.stubs` (at most one stub active per endpoint, switched at runtime).
    static func stubsScript(_ folder: String, _ endpoints: [(String, String)]) -> String {
        let table = endpoints.map { "  \($0.0) = \(lua($0.1))," }.joined(separator: "\n")
        return """
        -- Converted by `moonmock convert stubs \(folder)`.
        -- Save it in the folder you ran the command from: the stubs stay where they are.
        -- No stub is active at first (requests fall through to later rules); activate one from
        -- Swift (activateStub), the admin API (PUT /__moonmock/variants/NAME) or the dashboard.
        mock.stubs(\(lua(folder)), {
        \(table)
        })

        """
    }

    /// A Lua string literal.
    static func lua(_ s: String) -> String { LuaLiteral.string(s) }
}
