import Foundation
import MoonmockCore
import MoonmockScript

/// `moonmock check SCRIPT`: load, validate, list the rules.
enum Check {
    static func run(_ arguments: [String]) -> Int32 {
        var flags = ScriptFlags()
        var positional: [String] = []
        var i = 0
        do {
            while i < arguments.count {
                let arg = arguments[i]
                if arg == "-h" || arg == "--help" { print(MoonmockCLI.checkUsage); return 0 }
                let used = try flags.parse(arguments, at: i)
                if used > 0 { i += used; continue }
                if arg.hasPrefix("-") && arg != "-" { throw UsageError(MoonmockCLI.unknownOption(arg, usage: MoonmockCLI.checkUsage)) }
                positional.append(arg)
                i += 1
            }
            guard positional.count == 1 else {
                throw UsageError(positional.isEmpty ? "missing SCRIPT" : "unexpected argument '\(positional[1])'")
            }
        } catch let error as UsageError {
            return MoonmockCLI.usageError(error.message, MoonmockCLI.checkUsage)
        } catch {
            return 1
        }

        let engine = Engine()
        let generation: ScriptGeneration
        do {
            generation = try engine.loadScript(file: positional[0], options: flags.options)
        } catch {
            MoonmockCLI.printError(String(describing: error))
            return 1
        }
        let rules = generation.rules
        let variants = Dictionary(engine.variants.list().map { ($0.rule, $0) }) { a, _ in a }
        print("\(generation.displayName): ok, \(rules.count) rule\(rules.count == 1 ? "" : "s")")
        let width = min(48, rules.map(\.id.count).max() ?? 0)
        for rule in rules {
            var line = "  " + rule.id.padding(toLength: max(width, rule.id.count), withPad: " ", startingAt: 0)
            if let location = rule.location { line += "  " + location }
            var notes: [String] = []
            if let times = rule.times { notes.append("times=\(times)") }
            if rule.priority != 0 { notes.append("priority=\(rule.priority)") }
            if !rule.predicates.isEmpty { notes.append(rule.predicates.map(\.description).joined(separator: ", ")) }
            if let v = variants[rule.id] {
                notes.append("variants: " + v.names.map { $0 == v.active ? $0 + "*" : $0 }.joined(separator: ", "))
            }
            if !notes.isEmpty { line += "  [" + notes.joined(separator: "; ") + "]" }
            print(line)
        }
        let sharing = generation.checkSharing()
        if let reason = sharing.reason {
            print("Lua VMs: one, since \(reason)")
        } else {
            print("Lua VMs: serve may run several (no answer depends on a VM's own Lua state)")
        }
        return 0
    }
}
