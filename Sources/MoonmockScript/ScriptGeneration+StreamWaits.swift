import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// A stream generator's later stretches run as coroutines too: one that waits for the host
/// (`mock.fetch`, `mock.state` on a shared store) starts the wait and gives the door an empty
/// stretch with a short poll; the door asks again, and once the outcome is in, the stretch goes
/// on where it stopped. No thread is held while it waits.
extension ScriptGeneration {
    /// Runs the stretch function `ref` on a new Lua thread, or resumes `waiting` with its outcome.
    func stretch(_ source: LuaStreamSource, ref: Int32?, resuming waiting: (LuaThread, Suspension.Outcome)?) -> StreamBatch {
        withVM(nil) {
            let thread: LuaThread
            let arguments: Int32
            if let (t, outcome) = waiting {
                thread = t
                arguments = push(outcome, on: t)
            } else if let ref {
                thread = vm.newThread()
                lua_rawgeti(thread.state, mm_registryindex(), lua_Integer(ref))
                arguments = 0
            } else {
                return StreamBatch(chunks: [], done: true)
            }
            let resumption: ScriptGeneration.Resumption
            do {
                resumption = try resumeWaitable(thread, arguments: arguments)
            } catch {
                return StreamBatch(chunks: [], done: true, error: "stream generator: " + message(error))
            }
            switch resumption {
            case .finished:
                let stack = thread.stack
                defer { vm.recycle(thread) }
                do {
                    return StreamBatch(chunks: try readChunks(at: -2, stack), done: stack.bool(at: -1))
                } catch {
                    return StreamBatch(chunks: [], done: true, error: "stream generator: " + message(error))
                }
            case .waiting(let wait):
                source.begin(wait, thread: thread)
                return StreamBatch(chunks: [], done: false, pollMilliseconds: LuaStreamSource.pollMilliseconds)
            case .idle:
                return StreamBatch(chunks: [], done: true, error: "stream generator: it yielded without waiting for anything")
            }
        }
    }

    /// Lets a waiting generator's thread go, later, on another thread (see ``release(_:)``).
    func release(thread: LuaThread) {
        DispatchQueue.global().async { [self] in withVM(nil) { vm.release(thread) } }
    }
}

/// A `mock.sse(function(req, stream) ... end)` generator: a coroutine in one VM of the
/// generation that made it, resumed for each stretch (the generation stays alive meanwhile).
final class LuaStreamSource: StreamContinuation, @unchecked Sendable {
    // @unchecked: `state` is the only mutable part, under its lock.
    /// How often the door asks again while the generator waits for the host.
    static let pollMilliseconds = 10.0
    private let generation: ScriptGeneration
    private struct State: @unchecked Sendable {
        var ref: Int32?
        var waiting: LuaThread?
        var outcome: Suspension.Outcome?
        var cancel: (@Sendable () -> Void)?
    }
    private let state = Locked(State())
    private enum Step { case done, poll, start(Int32), resume(LuaThread, Suspension.Outcome) }

    init(generation: ScriptGeneration, ref: Int32) {
        self.generation = generation
        state.withLock { $0.ref = ref }
    }

    func next() -> StreamBatch {
        let step = state.withLock { s -> Step in
            guard let ref = s.ref else { return .done }
            guard let thread = s.waiting else { return .start(ref) }
            guard let outcome = s.outcome else { return .poll }
            s.waiting = nil
            s.outcome = nil
            s.cancel = nil
            return .resume(thread, outcome)
        }
        switch step {
        case .done: return StreamBatch(chunks: [], done: true)
        case .poll: return StreamBatch(chunks: [], done: false, pollMilliseconds: Self.pollMilliseconds)
        case .start(let ref): return generation.stretch(self, ref: ref, resuming: nil)
        case .resume(let thread, let outcome): return generation.stretch(self, ref: nil, resuming: (thread, outcome))
        }
    }

    /// Starts what the stretch waits for (called under the VM's lock, on the door's thread).
    func begin(_ wait: Suspension.Wait, thread: LuaThread) {
        state.withLock { $0.waiting = thread }
        let deliver: @Sendable (Suspension.Outcome) -> Void = { [weak self] outcome in self?.state.withLock { $0.outcome = outcome } }
        let cancel: @Sendable () -> Void
        switch wait {
        case .sleep(let ms):
            cancel = Scheduler.shared.after(ms / 1000) { deliver(.slept) }
        case .fetch(let request, _):
            guard let client = generation.engine.outbox.client else { return deliver(.failed("no outbound client in this door")) }
            let began = DispatchTime.now().uptimeNanoseconds
            cancel = client.send(request) { result in
                switch result {
                case .success(let response):
                    deliver(.fetched(response, milliseconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6))
                case .failure(let failure): deliver(.failed(failure.description))
                }
            }
        case .task(_, let start):
            cancel = start(deliver)
        }
        state.withLock { $0.cancel = cancel }
    }

    func close() {
        let (ref, thread, cancel) = state.withLock { s in
            defer { s = State() }
            return (s.ref, s.waiting, s.cancel)
        }
        cancel?()
        if let ref { generation.release(ref) }
        if let thread { generation.release(thread: thread) }
    }

    deinit { close() }
}
