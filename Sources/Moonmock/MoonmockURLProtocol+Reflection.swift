import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What swift-corelibs-foundation keeps private about a task, read by reflection: where the
/// protocol must call its client, and how the task takes its data.
extension MoonmockURLProtocol {
    /// Whether `task` was created with a completion handler (async `data(for:)` included).
    /// swift-corelibs-foundation keeps that in its session's task registry, which is not public:
    /// read by reflection, and `false` (slices, as for a delegate) if its shape is not the
    /// expected one. Call on the session's work queue (`startLoading`), which owns the registry.
    static func completionHandlerTakesLastChunkOnly(_ task: URLSessionTask?) -> Bool {
        #if canImport(FoundationNetworking)
        guard let task, let session = reflectedChild(task, "session"), let registry = reflectedChild(session, "taskRegistry"),
              let behaviours = reflectedChild(registry, "behaviours") else { return false }
        for entry in Mirror(reflecting: behaviours).children {
            let pair = Mirror(reflecting: entry.value).children.map(\.value)
            guard pair.count == 2, let id = pair[0] as? Int, id == task.taskIdentifier else { continue }
            // `dataCompletionHandler`, or `dataCompletionHandlerWithTaskDelegate` for async `data(for:)`.
            return Mirror(reflecting: pair[1]).children.first?.label?.hasPrefix("dataCompletionHandler") == true
        }
        return false
        #else
        return false
        #endif
    }

    /// The serial queue swift-corelibs-foundation runs `task`'s protocol calls on (its
    /// `workQueue`, not public: read by reflection); `nil` elsewhere or if it is not found.
    static func workQueue(of task: URLSessionTask?) -> DispatchQueue? {
        #if canImport(FoundationNetworking)
        guard let task else { return nil }
        return reflectedChild(task, "workQueue") as? DispatchQueue
        #else
        return nil
        #endif
    }

    /// The stored property `label` of `value` (its class's or a superclass's), unwrapped.
    static func reflectedChild(_ value: Any, _ label: String) -> Any? {
        func unwrap(_ value: Any) -> Any? {
            let m = Mirror(reflecting: value)
            guard m.displayStyle == .optional else { return value }
            return m.children.first.flatMap { unwrap($0.value) }
        }
        var mirror: Mirror? = Mirror(reflecting: value)
        while let m = mirror {
            if let found = m.children.first(where: { $0.label == label }) { return unwrap(found.value) }
            mirror = m.superclassMirror
        }
        return nil
    }
}
