/// One test at a time routes `URLSession.shared`: a process has one global Moonmock instance,
/// and every test target's suites run in one process, in parallel. Tests that install an
/// instance globally (or a kit that does) run their body inside ``exclusively(_:)``.
///
/// ```swift
/// try await SharedSessionLock.exclusively {
///     moonmock.installGlobally()
///     defer { moonmock.uninstallGlobally() }
///     _ = try await URLSession.shared.data(from: url)
/// }
/// ```
public actor SharedSessionLock {
    private static let shared = SharedSessionLock()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` when no other test holds the shared session.
    public static func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }

    private func acquire() async {
        if busy { await withCheckedContinuation { waiting.append($0) } } else { busy = true }
    }

    private func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
