import Foundation
import MoonmockCore

/// Errors from the in-process transport and from verification.
///
/// The `description` (and `localizedDescription`) is the whole story: for an unmatched request
/// it names the closest rules and why each did not match.
///
/// ```swift
/// do { _ = try await session.data(from: url) }
/// catch let error as MoonmockError { print(error) }   // no rule matched GET http://…; closest: …
/// ```
public struct MoonmockError: Error, CustomStringConvertible, LocalizedError, CustomNSError, Sendable {
    private enum Kind: Sendable {
        case unmatched
        case verification
        case fixture
        case released
    }

    private let kind: Kind
    public let description: String
    /// For unmatched requests: the closest rules.
    public let nearMisses: [NearMiss]

    private init(_ kind: Kind, _ description: String, nearMisses: [NearMiss] = []) {
        self.kind = kind
        self.description = description
        self.nearMisses = nearMisses
    }

    static func unmatched(_ request: MockRequest, _ misses: [NearMiss]) -> MoonmockError {
        MoonmockError(.unmatched, "Moonmock: " + unmatchedText(request, misses), nearMisses: misses)
    }

    static func verification(_ text: String) -> MoonmockError { MoonmockError(.verification, text) }
    static func fixture(_ text: String) -> MoonmockError { MoonmockError(.fixture, text) }
    static func released(_ url: String) -> MoonmockError {
        MoonmockError(.released, "Moonmock: \(url) was sent through a session configured for a Moonmock instance that no longer exists; keep the instance alive as long as its sessions")
    }

    /// `true` when a request reached no rule (the default unmatched policy).
    public var isUnmatchedRequest: Bool { kind == .unmatched }
    /// `true` when a `verify` call failed.
    public var isVerificationFailure: Bool { kind == .verification }

    public var errorDescription: String? { description }
    public static var errorDomain: String { "Moonmock" }
    public var errorCode: Int {
        switch kind {
        case .unmatched: return 1
        case .verification: return 2
        case .fixture: return 3
        case .released: return 4
        }
    }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }

    /// The near-miss report as text, shared by the error and the 501 body.
    static func unmatchedText(_ request: MockRequest, _ misses: [NearMiss]) -> String {
        var text = "no rule matched \(request.method) \(request.url)"
        if misses.isEmpty { return text + " (no rules are loaded)" }
        text += "; closest:"
        for miss in misses {
            text += "\n  - \(miss.ruleID)\(miss.location.map { " (\($0))" } ?? ""): \(miss.summary)"
        }
        return text
    }
}
