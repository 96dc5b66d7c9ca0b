import Foundation
import MoonmockCore

/// A WireMock folder (`mappings/*.json`, `__files/`) as a mocks.lua, through ``ScriptWriter``'s
/// response writing: URL matchers, method, query and header matchers, body patterns, the
/// response (status, headers, `body`, `jsonBody`, `base64Body`, `bodyFileName`, delay, fault),
/// priorities, and scenarios as `mock.state`. What has no equivalent is listed at the top.
///
/// ```swift
/// let output = try WireMockImporter.convert(folder: URL(fileURLWithPath: "wiremock"), options: .init(title: "…"))
/// ```
public enum WireMockImporter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// One mapping, read.
    struct Mapping {
        let source: String
        let json: [String: JSONValue]
    }

    public static func convert(folder: URL, options: ScriptWriter.Options) throws -> ScriptWriter.Output {
        let fm = FileManager.default
        let mappingsDir = folder.appendingPathComponent("mappings")
        guard let names = try? fm.contentsOfDirectory(atPath: mappingsDir.path) else {
            throw Failure(description: "\(folder.path): no mappings/ folder: is it a WireMock folder?")
        }
        var mappings: [Mapping] = [], notes: [WriterNote] = []
        for name in names.filter({ $0.hasSuffix(".json") }).sorted() {
            let source = "mappings/\(name)"
            guard let data = fm.contents(atPath: mappingsDir.appendingPathComponent(name).path),
                  let json = try? JSONValue(parsing: Array(data)) else {
                notes.append(WriterNote(source: source, message: "not JSON"))
                continue
            }
            if case .array(let list)? = json["mappings"] {
                for (i, m) in list.enumerated() {
                    if case .object(let o) = m { mappings.append(Mapping(source: "\(source) [\(i)]", json: o)) }
                }
            } else if case .object(let o) = json {
                mappings.append(Mapping(source: source, json: o))
            }
        }
        var writer = WireMockWriter(writer: ScriptWriter(options: options), files: folder.appendingPathComponent("__files"))
        var rules: [String] = []
        for mapping in mappings {
            do { rules.append(try writer.rule(mapping)) } catch let note as WriterNote.Raised {
                notes.append(WriterNote(source: mapping.source, message: note.message))
            }
        }
        var out = "-- \(options.title)\n"
        out += "-- \(rules.count) rule\(rules.count == 1 ? "" : "s") from \(mappings.count) mapping\(mappings.count == 1 ? "" : "s"), "
        out += "in the order of their files; higher WireMock priorities (lower numbers) come first.\n"
        out += "-- WireMock's equalToJson is written as a subset match (json = {...}): extra members are allowed.\n"
        let partial = writer.notes
        if !notes.isEmpty || !partial.isEmpty {
            out += "--\n-- Not converted (\(notes.count + partial.count)):\n"
            for note in notes + partial { out += "--   \(note.source): \(note.message)\n" }
        }
        if writer.usesScenarios {
            out += "\n-- WireMock scenarios: each one's state in mock.state, \"Started\" until a rule moves it on.\n"
            out += "local function scenario(name) return mock.state:get(\"scenario:\" .. name) or \"Started\" end\n"
        }
        out += rules.map { "\n" + $0 }.joined()
        return ScriptWriter.Output(script: out, fixtures: writer.fixtures.files, ruleCount: rules.count,
                                   notes: notes + partial)
    }
}

extension WriterNote {
    /// Thrown while a mapping is converted: the mapping is left out, and the message listed.
    struct Raised: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
