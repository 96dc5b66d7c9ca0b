import Foundation
import MoonmockCore
import MoonmockImport

/// `moonmock convert har FILE` and `convert wiremock DIR`: a source read and written by the one ScriptWriter.
enum ConvertImport {
    static func run(_ kind: String, _ arguments: [String]) -> Int32 {
        var file: String?, out: String?
        var hosts: Set<String> = []
        var options = ScriptWriter.Options(title: "")
        var i = 0
        func value(_ name: String) -> String? {
            guard i + 1 < arguments.count else { return nil }
            i += 2
            return arguments[i - 1]
        }
        while i < arguments.count {
            let arg = arguments[i]
            switch arg {
            case "--host", "--out", "--redact", "--redact-json", "--redact-cookie":
                guard let v = value(arg) else { return MoonmockCLI.usageError("\(arg) needs a value", MoonmockCLI.convertUsage) }
                switch arg {
                case "--host": hosts.insert(v.lowercased())
                case "--out": out = v
                case "--redact": options.redactHeaders.insert(v)
                case "--redact-cookie": options.redactCookies.insert(v)
                default: options.redactJSONKeys.insert(v)
                }
            case "--keep-host": options.keepHost = true; i += 1
            case "--keep-cookies": options.keepCookies = true; i += 1
            default:
                if arg.hasPrefix("-") { return MoonmockCLI.usageError(MoonmockCLI.unknownOption(arg, usage: MoonmockCLI.convertUsage), MoonmockCLI.convertUsage) }
                guard file == nil else { return MoonmockCLI.usageError("unexpected argument '\(arg)'", MoonmockCLI.convertUsage) }
                file = arg
                i += 1
            }
        }
        guard let file else {
            return MoonmockCLI.usageError(["har": "missing FILE.har", "openapi": "missing SPEC.json or SPEC.yaml"][kind] ?? "missing DIR", MoonmockCLI.convertUsage)
        }
        let name = (file as NSString).lastPathComponent
        options.useFixtures = out != nil
        do {
            let output: ScriptWriter.Output
            var notes = 0
            if kind == "openapi" {
                guard FileManager.default.isReadableFile(atPath: file) else {
                    MoonmockCLI.printError("moonmock: cannot read \(file)")
                    return 1
                }
                options.title = "Converted by `moonmock convert openapi \(name)`."
                output = try OpenAPIImporter.convert(file: URL(fileURLWithPath: file), options: options)
                notes = output.notes.count
            } else if kind == "wiremock" {
                options.title = "Converted by `moonmock convert wiremock \(name)`."
                output = try WireMockImporter.convert(folder: URL(fileURLWithPath: file), options: options)
                notes = output.notes.count
            } else {
                guard FileManager.default.isReadableFile(atPath: file) else {
                    MoonmockCLI.printError("moonmock: cannot read \(file)")
                    return 1
                }
                let (exchanges, found) = try HARImporter.read(file: URL(fileURLWithPath: file), hosts: hosts)
                options.title = "Converted by `moonmock convert har \(name)` from \(exchanges.count) request\(exchanges.count == 1 ? "" : "s")."
                output = ScriptWriter(options: options).write(exchanges, notes: found)
                notes = found.count
            }
            if let out {
                try output.save(in: URL(fileURLWithPath: out))
                print("moonmock: wrote \(out)/mocks.lua (\(output.ruleCount) rule\(output.ruleCount == 1 ? "" : "s")) and \(output.fixtures.count) fixture\(output.fixtures.count == 1 ? "" : "s")"
                      + (notes == 0 ? "" : "; \(notes) \(kind == "har" ? (notes == 1 ? "entry" : "entries") : (notes == 1 ? "item" : "items")) not converted, listed at its top"))
            } else {
                print(output.script, terminator: "")
            }
            return 0
        } catch {
            MoonmockCLI.printError("moonmock: \(error)")
            return 1
        }
    }
}
