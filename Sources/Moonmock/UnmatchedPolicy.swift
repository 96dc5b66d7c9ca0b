/// What the in-process transport does with a request that no rule answers (DESIGN §3).
///
/// ```swift
/// moonmock.unmatchedPolicy = .passThrough      // Moonmock sends it on, through its own session
/// moonmock.unmatchedPolicy = .leaveUnclaimed   // the next protocol of the session gets it
/// ```
public enum UnmatchedPolicy: Sendable, Equatable {
    /// Fail the task with a ``MoonmockError`` that names the closest rules (the default).
    case fail
    /// Answer `501 Not Implemented` with the same near-miss text as the body.
    case notImplemented
    /// Claim the request and send it to the real network through a separate session that
    /// Moonmock owns: it is in the journal and the log, with the status the network answered.
    case passThrough
    /// Do not claim the request (`canInit` answers `false`), so the next protocol class of
    /// the session's configuration handles it — URLSession's own HTTP loader, or another
    /// mocking library — as Mockingjay and MockingBird do. Moonmock never sees it: it is in
    /// no journal. Whether a rule answers is decided before the task starts, from patterns,
    /// methods, conditions and `times` budgets; a handler that then returns `nil` (falls
    /// through) has its request sent on as with ``passThrough``.
    case leaveUnclaimed
}
