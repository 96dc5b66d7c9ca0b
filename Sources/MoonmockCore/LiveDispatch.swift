import Foundation

/// Marks the routing of a streaming call whose messages are still to come (an HTTP/2 stream
/// routed on its headers): the rule answers with the call's endpoint instead of waiting for the
/// whole body. Set by the door around the engine's call, on that thread.
///
/// ```swift
/// LiveDispatch.run { engine.handle(request) }   // a live rule sees LiveDispatch.isActive
/// ```
public enum LiveDispatch {
    private static let key = "moonmock.live-dispatch"

    public static var isActive: Bool { Thread.current.threadDictionary[key] != nil }

    public static func run<R>(_ body: () throws -> R) rethrows -> R {
        Thread.current.threadDictionary[key] = true
        defer { Thread.current.threadDictionary.removeObject(forKey: key) }
        return try body()
    }
}
