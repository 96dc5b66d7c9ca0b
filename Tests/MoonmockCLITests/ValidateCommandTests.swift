import Foundation
import Testing

@Suite("moonmock validate")
struct ValidateCommandTests {
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "owner": {"$ref": "owner.yaml"}}}"#.utf8)
            .write(to: url.appendingPathComponent("pet.json"))
        try Data("type: object\nproperties:\n  email: { type: string, format: email }\n".utf8).write(to: url.appendingPathComponent("owner.yaml"))
        try Data(#"{"id": 7, "owner": {"email": "ana@example.com"}}"#.utf8).write(to: url.appendingPathComponent("good.json"))
        try Data(#"{"id": "seven", "owner": {"email": "nope"}}"#.utf8).write(to: url.appendingPathComponent("bad.json"))
        return url
    }

    @Test("files: one JSON line each, a $ref to a YAML file beside the schema, exit 1 when any is invalid")
    func files() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await runCLI(["validate", "pet.json", "good.json", "bad.json"], in: dir)
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0] == #"{"errors":[],"instance":"good.json","valid":true}"#)
        #expect(lines[1] == #"{"errors":[{"instance_path":"/id","message":"expected integer, got string","schema_path":"/properties/id/type"},"#
                + #"{"instance_path":"/owner/email","message":"not a valid email","schema_path":"/properties/owner/$ref/properties/email/format"}],"#
                + #""instance":"bad.json","valid":false}"#, "\(r.stdout)")
        #expect(try await runCLI(["validate", "pet.json", "good.json"], in: dir).status == 0)
    }

    @Test("JSON lines on standard input; --draft; usage errors exit 64; an unreadable instance exits 2")
    func stdinAndErrors() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await runCLI(["validate", "pet.json"], in: dir, input: "{\"id\": 1}\n{}\n")
        #expect(r.status == 1)
        #expect(r.stdout == "{\"errors\":[],\"valid\":true}\n{\"errors\":[{\"instance_path\":\"\",\"message\":\"id is required\",\"schema_path\":\"/required\"}],\"valid\":false}\n", "\(r.stdout)")
        // draft 4: exclusiveMaximum is a flag beside maximum.
        try Data(#"{"maximum": 5, "exclusiveMaximum": true}"#.utf8).write(to: dir.appendingPathComponent("d4.json"))
        #expect(try await runCLI(["validate", "d4.json", "--draft", "4"], in: dir, input: "5\n").status == 1)
        #expect(try await runCLI(["validate", "--draft", "9", "d4.json"], in: dir).status == 64)
        #expect(try await runCLI(["validate"], in: dir).status == 64)
        #expect(try await runCLI(["validate", "pet.json", "missing.json"], in: dir).status == 2)
    }
}
