import Foundation
import MoonmockCore
#if canImport(XCTest)
import XCTest
#endif
#if canImport(Testing)
import Testing
#endif

#if canImport(XCTest)
/// Removes every stub when an XCTest test ends, as Mockingjay does: registered with XCTest's
/// observation center the first time a stub is added.
final class StubCleaner: NSObject, XCTestObservation, @unchecked Sendable {
    static let shared = StubCleaner()
    private static let registered = Locked(false)
    /// XCTest runs its tests on the main thread, where the observer is added; a stub added
    /// elsewhere (a Swift Testing test) is not in an XCTest test.
    static func register() {
        guard Thread.isMainThread, !registered.withLock({ done in defer { done = true }; return done }) else { return }
        MainActor.assumeIsolated { XCTestObservationCenter.shared.addTestObserver(StubCleaner.shared) }
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        MockingjayProtocol.removeAllStubs()
    }
}

func watchXCTestCases() { StubCleaner.register() }
#else
func watchXCTestCases() {}
#endif

// TestScoping is Swift Testing's from Swift 6.1 (Xcode 16.3); older compilers get no trait.
#if canImport(Testing) && compiler(>=6.1)
/// Scopes stubs to one Swift Testing test: the stubs it adds are removed when it ends, and
/// tests with this trait run one at a time (stubs are global, as in Mockingjay, so two such
/// tests at once would see each other's).
///
/// ```swift
/// @Test(.mockingjay) func showsTheUser() async throws {
///     stub(uri("/users/{id}"), json(["name": "Ada"]))
///     ...
/// }
/// ```
public struct MockingjayTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's trait scopes each of its tests, not the suite as a whole.
        guard testCase != nil || !test.isSuite else { return try await function() }
        try await ScopeQueue.shared.run {
            let scope = StubScope()
            defer { scope.removeAll() }
            try await MockingjayProtocol.$scope.withValue(scope) { try await function() }
        }
    }
}

extension Trait where Self == MockingjayTrait {
    /// Stubs added during the test are removed when it ends; such tests run one at a time.
    public static var mockingjay: MockingjayTrait { MockingjayTrait() }
}

/// Runs scoped tests one after another (a FIFO of waiting tests).
actor ScopeQueue {
    static let shared = ScopeQueue()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run(_ body: @Sendable () async throws -> Void) async throws {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        try await body()
    }
}
#endif
