import Foundation
import MoonmockCore
import MoonmockYAML
import MoonmockImport
import MoonmockSchema

/// `moonmock validate SCHEMA [--draft D] [INSTANCE...]`: instances (files, or JSON lines on
/// standard input) against a JSON Schema, one JSON line each; exit 1 when any is invalid.
enum Validate {
    static let usage = """
    usage: moonmock validate SCHEMA.json|SCHEMA.yaml [--draft 2020-12|2019-09|7|6|4|openapi-3.0] [INSTANCE...]

    Validates each INSTANCE file (JSON or YAML) against the schema, or each line of standard
    input (one JSON value per line) when no file is given, and prints one JSON line per
    instance: {"valid": true|false, "errors": [{"instance_path", "schema_path", "message"}]}
    (with "instance": the file's name). Exits 1 when any instance is invalid, 2 when one cannot
    be read. The draft comes from the schema's $schema unless --draft says; $refs to other
    files resolve relative to the schema's path. format is asserted for date, date-time, time,
    email, uuid, uri, ipv4, ipv6, hostname, byte, int32 and int64.

    options:
      --draft D              2020-12 (default), 2019-09, 7, 6, 4 or openapi-3.0
      -h, --help             show this help
    """

    static func run(_ arguments: [String]) -> Int32 {
        var schemaPath: String?
        var draft: JSONSchema.Draft?
        var instances: [String] = []
        let args = ArgumentReader(arguments)
        do {
            while let arg = args.next() {
                switch arg {
                case "-h", "--help": print(usage); return 0
                case "--draft":
                    let v = try args.value(arg)
                    guard let d = JSONSchema.Draft(rawValue: v) else {
                        throw UsageError("--draft takes 2020-12, 2019-09, 7, 6, 4 or openapi-3.0, got '\(v)'")
                    }
                    draft = d
                default:
                    if arg.hasPrefix("-") && arg != "-" { throw UsageError(MoonmockCLI.unknownOption(arg, usage: usage)) }
                    if schemaPath == nil { schemaPath = arg } else { instances.append(arg) }
                }
            }
            guard schemaPath != nil else { throw UsageError("missing SCHEMA (a JSON or YAML file)") }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, usage)
        } catch {
            return 1
        }
        let schemaURL = URL(fileURLWithPath: schemaPath!).standardizedFileURL
        let root: JSONValue
        do { root = try read(schemaURL.path) } catch {
            MoonmockCLI.printError("moonmock: \(schemaPath!): \(error)")
            return 2
        }
        let schema = JSONSchema(root, draft: draft, baseURI: schemaURL.absoluteString, loader: { uri in
            guard let url = URL(string: uri), url.isFileURL else { return nil }
            return try? read(url.path)
        })
        var anyInvalid = false
        func report(_ value: JSONValue, name: String?) {
            let errors = schema.validate(value, direction: .none)
            anyInvalid = anyInvalid || !errors.isEmpty
            var line: [String: JSONValue] = ["valid": .bool(errors.isEmpty), "errors": .array(errors.map(\.json))]
            if let name { line["instance"] = .string(name) }
            FileHandle.standardOutput.write(Data(JSONValue.object(line).encoded() + [0x0A]))
        }
        if instances.isEmpty {
            var number = 0
            while let text = readLine(strippingNewline: true) {
                number += 1
                if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                do { report(try JSONValue(parsing: Array(text.utf8)), name: nil) } catch {
                    MoonmockCLI.printError("moonmock: line \(number): not JSON: \(error)")
                    return 2
                }
            }
        } else {
            for path in instances {
                do { report(try read(path), name: path) } catch {
                    MoonmockCLI.printError("moonmock: \(path): \(error)")
                    return 2
                }
            }
        }
        return anyInvalid ? 1 : 0
    }

    /// A JSON or YAML file's value.
    static func read(_ path: String) throws -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else { throw ReadError(message: "cannot read the file") }
        if path.hasSuffix(".yaml") || path.hasSuffix(".yml") { return try YAMLReader.read(Array(data)) }
        return try JSONValue(parsing: Array(data))
    }

    struct ReadError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
