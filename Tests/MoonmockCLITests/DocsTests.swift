import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
import Testing

/// The README and docs/ as a reader uses them: every whole script loads, every shown output is
/// what the commands print, every link leads somewhere in the repository.
@Suite("README and docs")
struct DocsTests {
    struct Block {
        let file: String
        let line: Int
        let info: String
        let text: String
    }

    static var pages: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: CLIRunner.packageRoot.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The fenced blocks of `file`, with the line of their opening fence.
    static func blocks(_ file: String) throws -> [Block] {
        let text = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent(file), encoding: .utf8)
        var blocks: [Block] = []
        var open: (line: Int, info: String, lines: [String])?
        for (n, line) in text.components(separatedBy: "\n").enumerated() {
            if line.hasPrefix("```") {
                if let o = open {
                    blocks.append(Block(file: file, line: o.line, info: o.info, text: o.lines.joined(separator: "\n") + "\n"))
                    open = nil
                } else {
                    open = (n + 1, String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
                }
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        return blocks
    }

    @Test("the README is a short page: at most 250 lines, and no link leads outside the repository")
    func readme() throws {
        let text = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(text.components(separatedBy: "\n").count <= 251)
        #expect(!text.contains("../shared"))
        for page in Self.pages {
            let body = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent(page), encoding: .utf8)
            let folder = URL(fileURLWithPath: page).deletingLastPathComponent().relativePath
            var rest = Substring(body)
            while let open = rest.range(of: "](") {
                let target = rest[open.upperBound...].prefix { $0 != ")" }
                rest = rest[target.endIndex...]
                let path = target.split(separator: "#", omittingEmptySubsequences: false).first.map(String.init) ?? ""
                if path.isEmpty || path.contains("://") { continue }
                let resolved = CLIRunner.packageRoot.appendingPathComponent(folder).appendingPathComponent(path).path
                #expect(FileManager.default.fileExists(atPath: resolved), "\(page): link to \(path) leads nowhere")
            }
        }
    }

    @Test("docs/architecture.md's module table names every target of Package.swift")
    func layout() throws {
        let package = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let page = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var targets: [String] = []
        for kind in [".target(name: \"", ".systemLibrary(\n            name: \"", ".systemLibrary(name: \"", ".executableTarget(name: \""] {
            var rest = Substring(package)
            while let r = rest.range(of: kind) {
                let name = rest[r.upperBound...].prefix { $0 != "\"" }
                targets.append(String(name))
                rest = rest[name.endIndex...]
            }
        }
        #expect(targets.count >= 14, "\(targets)")
        for target in targets { #expect(page.contains("| `\(target)` |"), "\(target) is missing from docs/architecture.md") }
    }

    @Test("every whole script (```lua) in the README and docs passes moonmock check")
    func scriptsLoad() async throws {
        let blocks = try Self.pages.flatMap { try Self.blocks($0) }.filter { $0.info == "lua" }
        #expect(blocks.count >= 15)
        // A folder like the examples': the scripts' fixtures resolve in it.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLIRunner.packageRoot.appendingPathComponent("examples/fixtures"),
                                         to: dir.appendingPathComponent("fixtures"))
        // The spec the contract examples keep (docs/language.md, docs/contract.md).
        for name in ["petstore.yaml", "schemas.yaml"] {
            try FileManager.default.copyItem(at: CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/contract/" + name),
                                             to: dir.appendingPathComponent(name))
        }
        // The schema the gRPC examples load (docs/grpc.md).
        try FileManager.default.copyItem(at: CLIRunner.packageRoot.appendingPathComponent("Tests/GRPC/shop.proto"),
                                         to: dir.appendingPathComponent("shop.proto"))
        let failures = await cliThread { () -> [String] in
            var failures: [String] = []
            for (i, block) in blocks.enumerated() {
                let name = "block\(i).lua"
                try? block.text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
                guard let r = try? CLIRunner.run(["check", name], in: dir) else { failures.append("\(block.file):\(block.line): did not run"); continue }
                if r.status != 0 { failures.append("\(block.file):\(block.line): \(r.stderr)") }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("every shown output (```console) is what its command prints, against the served example")
    func consoleOutput() async throws {
        let blocks = try Self.pages.flatMap { try Self.blocks($0) }.filter { $0.info == "console" }
        #expect(!blocks.isEmpty)
        let (process, _, text) = try launchServe(["examples/mocks.lua", "--port", "0"], until: "\n")
        defer { process.stop() }
        let firstLine = text.split(separator: "\n").first.map(String.init) ?? ""
        let port = try #require(firstLine.split(separator: ":").last.flatMap { Int($0) })
        let failures = await cliThread { () -> [String] in
            var failures: [String] = []
            for block in blocks {
                // "$ command" lines, each followed by the output it prints.
                var steps: [(command: String, expected: [String])] = []
                for line in block.text.components(separatedBy: "\n").dropLast() {
                    if line.hasPrefix("$ ") { steps.append((String(line.dropFirst(2)), [])) } else if !steps.isEmpty { steps[steps.count - 1].expected.append(line) }
                }
                for step in steps {
                    var command = step.command.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
                    if command.hasPrefix("moonmock ") { command = CLIRunner.binary.path + command.dropFirst(8) }
                    guard command.hasPrefix("curl ") || command.hasPrefix(CLIRunner.binary.path) else {
                        failures.append("\(block.file):\(block.line): '\(step.command)' is neither curl nor moonmock: show it as ```text, marked illustrative")
                        continue
                    }
                    let p = Subprocess()
                    p.executableURL = URL(fileURLWithPath: "/bin/sh")
                    p.arguments = ["-c", command]
                    p.currentDirectoryURL = CLIRunner.packageRoot
                    let out = Pipe()
                    p.standardOutput = out
                    p.standardError = FileHandle.nullDevice
                    do { try p.run() } catch { failures.append("\(block.file):\(block.line): \(error)"); continue }
                    let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    p.waitUntilExit()
                    let expected = step.expected.joined(separator: "\n") + (step.expected.isEmpty ? "" : "\n")
                    // (An answer without a final newline shows on a line of its own all the same.)
                    if printed != expected && printed + "\n" != expected {
                        failures.append("\(block.file):\(block.line): '\(step.command)' printed\n\(printed)instead of\n\(expected)")
                    }
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
