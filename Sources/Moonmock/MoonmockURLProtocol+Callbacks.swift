import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a protocol's later client calls go (after a delay, between slices of a stream, when
/// a pass-through or proxy answers): back to where `startLoading` ran.
///
/// - `.queue`: swift-corelibs-foundation calls `startLoading` on the session's serial work
///   queue, whose task registry is not thread-safe (a call from a timer thread can race a task
///   being added: a crash under load); later calls go to that queue.
/// - `.runLoop`: Apple's URL loading system calls `startLoading` on a thread running a run loop
///   and expects every client call on that thread, in that run-loop mode; later calls are
///   performed there.
/// - A `startLoading` on neither (a protocol object called directly from a plain queue) gets a
///   serial queue of its own, so that its client calls keep their order.
///
/// ```swift
/// let route = CallbackRoute.here(workQueue: Self.workQueue(of: task))   // in startLoading
/// route.async { me.client?.urlProtocolDidFinishLoading(me) }
/// ```
struct CallbackRoute: @unchecked Sendable {   // a RunLoop is used only through its thread-safe perform
    private enum Place {
        case queue(DispatchQueue)
        case runLoop(RunLoop, RunLoop.Mode)
    }
    private let place: Place

    /// The route back to the caller: `workQueue` when there is one, else the current thread's
    /// run loop in its current mode when one is running, else a new serial queue.
    static func here(workQueue: DispatchQueue?) -> CallbackRoute {
        if let workQueue { return CallbackRoute(place: .queue(workQueue)) }
        let runLoop = RunLoop.current
        if let mode = runLoop.currentMode { return CallbackRoute(place: .runLoop(runLoop, mode)) }
        return CallbackRoute(place: .queue(DispatchQueue(label: "moonmock.protocol")))
    }

    /// Runs `body` there, soon.
    func async(_ body: @escaping @Sendable () -> Void) {
        switch place {
        case .queue(let queue):
            queue.async(execute: body)
        case .runLoop(let runLoop, let mode):
            runLoop.perform(inModes: [mode], block: body)
            #if canImport(Darwin)
            // CFRunLoopPerformBlock does not wake a sleeping run loop; CF's calls are thread-safe.
            CFRunLoopWakeUp(runLoop.getCFRunLoop())
            #endif
            // corelibs Foundation has no public wake: the block runs on the loop's next turn.
        }
    }

    /// Runs `item` there after `seconds`, unless it is cancelled first.
    func asyncAfter(_ seconds: Double, _ item: DispatchWorkItem) {
        switch place {
        case .queue(let queue):
            queue.asyncAfter(deadline: .now() + seconds, execute: item)
        case .runLoop:
            let hop = Unchecked(item)
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                guard !hop.value.isCancelled else { return }
                self.async { if !hop.value.isCancelled { hop.value.perform() } }
            }
        }
    }
}
