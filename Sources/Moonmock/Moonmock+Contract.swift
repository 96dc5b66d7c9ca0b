import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript

/// How a spec is kept: `.warn` serves everything and reports what breaks it; `.enforce` also
/// refuses a request that breaks it (400) and turns an answer that does into a 500.
public typealias SpecMode = OpenAPIContract.Mode

extension Moonmock {
    /// Creates an instance serving `script` and checking every request and answer against the
    /// OpenAPI spec at `spec` (YAML where libyaml is, JSON everywhere).
    ///
    /// ```swift
    /// let moonmock = try Moonmock(script: scriptURL, spec: specURL, specMode: .enforce)
    /// // ... run the app's requests ...
    /// try moonmock.assertContractClean()
    /// ```
    public convenience init(script: URL, spec: URL, specMode: SpecMode = .warn, options: ScriptOptions = ScriptOptions(),
                            environment: MockEnvironment = .system) throws {
        self.init(environment: environment)
        try addSpec(spec, mode: specMode)
        try load(script: script, options: options)
    }

    /// Checks requests and answers against another spec from now on (beside the script's
    /// `mock.spec`s, which a reload replaces).
    public func addSpec(_ url: URL, mode: SpecMode = .warn) throws {
        let contract = try OpenAPIContract(file: url, mode: mode)
        let kept = engine.contracts(from: .commandLine)
        engine.setContracts(kept + [contract], from: .commandLine)
    }

    /// `GET /__moonmock/contract`'s summary: per operation the requests and violations, the
    /// operations no request reached, the violations in all.
    public var contractSummary: JSONValue { engine.contractSummary() }

    /// Throws a ``MoonmockError`` listing each violation when any request or answer broke a
    /// spec since the start or ``reset()``.
    public func assertContractClean() throws {
        guard !engine.contractCheckers.isEmpty else {
            throw MoonmockError.verification("Moonmock: no spec is checked: give Moonmock(script:spec:) a spec, or call mock.spec in the script")
        }
        let summary = engine.contractSummary()
        guard case .integer(let total)? = summary["violations"], total > 0 else { return }
        var lines: [String] = []
        if case .array(let operations)? = summary["operations"] {
            for operation in operations {
                guard case .array(let list)? = operation["violations"] else { continue }
                for v in list {
                    guard case .array(let errors)? = v["errors"] else { continue }
                    for e in errors {
                        let at = e["instance_path"]?.stringValue ?? ""
                        lines.append("  - #\(v["request_id"].map { $0.brief } ?? "?") \(operation["operation"]?.brief ?? "no operation") \(v["direction"]?.brief ?? ""): \(at.isEmpty ? "" : at + ": ")\(e["message"]?.stringValue ?? "")")
                    }
                }
            }
        }
        throw MoonmockError.verification("Moonmock: expected a clean contract, got \(total) violation(s):\n" + lines.joined(separator: "\n"))
    }
}
