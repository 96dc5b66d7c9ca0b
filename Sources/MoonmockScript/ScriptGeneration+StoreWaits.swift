import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// `mock.state` on a shared store from a handler running on an event loop with a store channel
/// (``StoreChannels``): the command is queued on the loop's connection and the handler waits for
/// its reply, so the loop serves on meanwhile. Elsewhere (in-process, `when` conditions, store
/// workers) the same calls block as before.
extension ScriptGeneration {
    /// The loop's channel when `state` is the shared store and the caller is the running
    /// handler's own coroutine; `nil` when the call should block instead.
    func storeChannel(for state: StateStore, _ stack: LuaStack) -> (any StoreChannel)? {
        guard state.backend != nil, state === engine.state, mayWait(stack) else { return nil }
        return StoreChannels.current
    }

    /// Notes the wait for `operation`'s reply (the driver sends it, on this loop, before the
    /// turn ends); the prelude's wrapper yields on the third result (`nil, nil, true`).
    func waitForStore(_ operation: StateOperation, _ state: StateStore, _ channel: any StoreChannel, _ stack: LuaStack) throws -> Int32 {
        try state.check(operation)
        let bound = LoopBound(channel)
        // Sent by the driver on the same loop, in the same turn: the reply comes later.
        pendingWait = .store("mock.state:\(operation.name) on the shared store") { state.submit(operation, through: bound.value, $0) }
        stack.pushNil()
        stack.pushNil()
        stack.push(true)
        return 3
    }
}
