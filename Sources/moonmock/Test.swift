import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript

/// `moonmock test [SCRIPT] [SPEC...]`: runs spec files against a script, like a test runner.
enum Test {
    static let usage = """
    usage: moonmock test [SCRIPT] [SPEC...] [options]

    Runs the spec files (default: every *_test.lua beside SCRIPT, default ./mocks.lua) against
    SCRIPT. Each test starts from a fresh script: new state, sequences and times budgets, and a
    clock that moves only with advance(ms) and the delays of answers. Exit 1 when a test fails.

    options:
      --junit FILE     also write the results as JUnit XML to FILE
      --spec FILE      fail a test whose answers break this OpenAPI spec (repeatable;
                       the script's own mock.spec counts too)
      --lib DIR        also look for require()d modules in DIR (repeatable)
      --unsafe         lift the sandbox (trusted local scripts only)
      -h, --help       show this help
    """

    static func run(_ arguments: [String]) -> Int32 {
        var flags = ScriptFlags()
        var positional: [String] = []
        var junit: String?
        var contractFiles: [String] = []
        var i = 0
        do {
            while i < arguments.count {
                let arg = arguments[i]
                if arg == "-h" || arg == "--help" { print(usage); return 0 }
                let used = try flags.parse(arguments, at: i)
                if used > 0 { i += used; continue }
                if arg == "--spec" {
                    guard i + 1 < arguments.count else { throw UsageError("--spec needs a file") }
                    contractFiles.append(arguments[i + 1])
                    i += 2
                    continue
                }
                if arg == "--junit" {
                    guard i + 1 < arguments.count else { throw UsageError("--junit needs a file") }
                    junit = arguments[i + 1]
                    i += 2
                    continue
                }
                if arg.hasPrefix("-") && arg != "-" {
                    throw UsageError(MoonmockCLI.unknownOption(arg, usage: usage))
                }
                positional.append(arg)
                i += 1
            }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, usage)
        } catch {
            return 1
        }
        // SCRIPT is the first argument unless it is a spec; the rest are specs.
        var script = "mocks.lua"
        var specs = positional
        if let first = positional.first, !first.hasSuffix("_test.lua") {
            script = first
            specs.removeFirst()
        }
        let runner = SpecRunner(script: script, options: flags.options)
        do {
            runner.contracts = try contractFiles.map { try OpenAPIContract(file: URL(fileURLWithPath: $0)) }
        } catch {
            MoonmockCLI.printError("moonmock: --spec: \(error)")
            return 1
        }
        if let error = runner.checkScript() {
            MoonmockCLI.printError(error)
            return 1
        }
        if specs.isEmpty { specs = defaultSpecs(beside: script) }
        guard !specs.isEmpty else {
            let folder = URL(fileURLWithPath: script).deletingLastPathComponent().relativePath
            MoonmockCLI.printError("moonmock: no spec files: give SPEC files, or put *_test.lua files beside \(script) (in \(folder)/)")
            return 1
        }
        var files: [SpecRunner.FileResult] = []
        var passed = 0, failed = 0
        for spec in specs {
            let file = runner.run(specFile: spec)
            files.append(file)
            print(file.file)
            if let error = file.loadError {
                print("  ✘ does not load: " + error.replacingOccurrences(of: "\n", with: "\n    "))
                failed += 1
                continue
            }
            if file.results.isEmpty { print("  (no tests: call test(name, fn))") }
            for result in file.results {
                let ms = Int((result.seconds * 1000).rounded())
                if let failure = result.failure {
                    failed += 1
                    print("  ✘ \(result.name) (\(ms) ms)")
                    print("      " + failure.replacingOccurrences(of: "\n", with: "\n      "))
                } else {
                    passed += 1
                    print("  ✔ \(result.name) (\(ms) ms)")
                }
            }
        }
        print("\(passed) passed, \(failed) failed")
        if let junit {
            do {
                try JUnitReport.xml(files).write(toFile: junit, atomically: true, encoding: .utf8)
            } catch {
                MoonmockCLI.printError("moonmock: cannot write \(junit): \(error.localizedDescription)")
                return 1
            }
        }
        return failed == 0 ? 0 : 1
    }

    /// The `*_test.lua` files in the script's folder, sorted.
    static func defaultSpecs(beside script: String) -> [String] {
        let folder = URL(fileURLWithPath: script).deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let prefix = script.contains("/") ? folder.relativePath + "/" : ""
        return names.filter { $0.hasSuffix("_test.lua") }.sorted().map { prefix + $0 }
    }
}

/// The results as JUnit XML, which CI systems show as test reports.
enum JUnitReport {
    static func xml(_ files: [SpecRunner.FileResult]) -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<testsuites>\n"
        for file in files {
            let failures = file.results.filter { $0.failure != nil }.count + (file.loadError == nil ? 0 : 1)
            let seconds = file.results.reduce(0) { $0 + $1.seconds }
            out += #"  <testsuite name="\#(escape(file.file))" tests="\#(max(file.results.count, file.loadError == nil ? 0 : 1))" failures="\#(failures)" time="\#(String(format: "%.3f", seconds))">"# + "\n"
            if let error = file.loadError {
                out += #"    <testcase name="load" classname="\#(escape(file.file))"><failure message="does not load">\#(escape(error))</failure></testcase>"# + "\n"
            }
            for r in file.results {
                out += #"    <testcase name="\#(escape(r.name))" classname="\#(escape(file.file))" time="\#(String(format: "%.3f", r.seconds))""#
                if let failure = r.failure {
                    let first = failure.split(separator: "\n").first.map(String.init) ?? failure
                    out += #"><failure message="\#(escape(first))">\#(escape(failure))</failure></testcase>"# + "\n"
                } else {
                    out += "/>\n"
                }
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\t": out.unicodeScalars.append(c)
            case _ where c.value < 0x20: out += " "   // not allowed in XML 1.0
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
