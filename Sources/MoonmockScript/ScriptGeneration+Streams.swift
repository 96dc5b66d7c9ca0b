import CLua
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
        var chunks: [StreamPlan.Chunk] = []
        if stack.getField(t, "chunks") == LUA_TTABLE {
            let list = stack.top
            let count = stack.rawLength(list)
            chunks.reserveCapacity(count)
            if count > 0 {
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
            }
        }
        stack.pop()
        return StreamPlan(chunks: chunks, closes: closes, heartbeat: heartbeat.map { (bytes: $0.0, everyMilliseconds: $0.1) }, kind: kind)
    }
}
