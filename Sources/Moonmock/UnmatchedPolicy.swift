/// What the in-process transport does with a request that no rule answers (DESIGN §3).
///
/// ```swift
/// moonmock.unmatchedPolicy = .passThrough   // let the real network answer
/// ```
public enum UnmatchedPolicy: Sendable, Equatable {
    /// Fail the task with a ``MoonmockError`` that names the closest rules (the default).
    case fail
    /// Answer `501 Not Implemented` with the same near-miss text as the body.
    case notImplemented
    /// Send the request to the real network through a separate session.
    case passThrough
}
