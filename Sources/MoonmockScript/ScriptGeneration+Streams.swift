import CLua
import Dispatch
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// The ``StreamPlan`` of a `stream` response value (`mock.sse`, `mock.stream`, `mock.llm`):
    /// `chunks = { { data =, delay =, id = }, ... }`, `close`, `heartbeat` (ms) with
    /// `heartbeat_bytes`, `stream_kind`, `content_type`. Sets the stream's fields on `response`:
    /// its content type, and `Cache-Control: no-cache` for events.
    func streamPlan(_ t: Int32, _ stack: LuaStack, into response: inout MockResponse) throws -> StreamPlan {
        guard stack.ensure(4) else { throw LuaError.host("stack overflow") }
        stack.getField(t, "stream_kind")
        let kind = stack.string(at: -1) ?? "stream"
        stack.pop()
        stack.getField(t, "content_type")
        if let type = stack.string(at: -1) { response.headers["Content-Type"] = type }
        stack.pop()
        if kind == "sse" { response.headers["Cache-Control"] = "no-cache" }
        stack.getField(t, "close")
        let closes = stack.type(at: -1) == LUA_TNIL || stack.bool(at: -1)
        stack.pop()
        var heartbeat: ([UInt8], Double)?
        if stack.getField(t, "heartbeat") == LUA_TNUMBER, let every = stack.number(at: -1), every > 0 {
            stack.getField(t, "heartbeat_bytes")
            heartbeat = (stack.bytes(at: -1) ?? Array("\n".utf8), every)
            stack.pop()
        }
        stack.pop()
        stack.getField(t, "chunks")
        let chunks = try readChunks(at: -1, stack)
        stack.pop()
        // A generator's next stretches: its `more` function, kept in the registry until the stream ends.
        var more: (any StreamContinuation)?
        stack.getField(t, "done")
        let done = stack.bool(at: -1)
        stack.pop()
        if !done {
            if stack.getField(t, "more") == LUA_TFUNCTION {
                more = LuaStreamSource(generation: self, ref: luaL_ref(stack.L, mm_registryindex()))   // pops it
            } else {
                stack.pop()
            }
        }
        return StreamPlan(chunks: chunks, closes: closes, heartbeat: heartbeat.map { (bytes: $0.0, everyMilliseconds: $0.1) },
                          kind: kind, more: more)
    }

    /// `{ { data =, delay =, id = }, ... }` at `i`.
    func readChunks(at i: Int32, _ stack: LuaStack) throws -> [StreamPlan.Chunk] {
        guard stack.type(at: i) == LUA_TTABLE else { return [] }
        let list = stack.absolute(i)
        let count = stack.rawLength(list)
        var chunks: [StreamPlan.Chunk] = []
        chunks.reserveCapacity(count)
        guard count > 0 else { return chunks }
        for k in 1...count {
            guard stack.ensure(4) else { throw LuaError.host("stack overflow") }
            stack.getIndex(list, Int64(k))
            let item = stack.top
            stack.getField(item, "data")
            let bytes = stack.bytes(at: -1) ?? []
            stack.pop()
            stack.getField(item, "delay")
            let delay = stack.number(at: -1) ?? 0
            stack.pop()
            stack.getField(item, "id")
            let id = stack.string(at: -1)
            stack.pop(2)
            chunks.append(.init(bytes: bytes, delayMilliseconds: max(0, delay), eventID: id))
        }
        return chunks
    }

    /// Lets a generator go — later, on another thread: the caller may be inside this VM's
    /// lock already (a plan made and dropped while a handler runs).
    func release(_ ref: Int32) {
        DispatchQueue.global().async { [self] in
            withVM(nil) { luaL_unref(vm.state, mm_registryindex(), ref) }
        }
    }
}
