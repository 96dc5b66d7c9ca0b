@testable import MoonmockServer

extension FuzzTargets {
    /// The WebSocket frame reader fed a client's bytes, whole and then cut into pieces every
    /// N bytes (N from the first byte; its top bit: with permessage-deflate agreed, so that
    /// RSV1 messages are inflated): the events are the same either way, a message never
    /// exceeds the limit, and nothing is read after a close or a failure.
    static func websocket(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let bytes = Array(input.dropFirst())
        let step = Int(first & 0x3F) + 1
        let limit = 256
        let deflate = first & 0x80 != 0
        var whole = WebSocketReader(maxMessage: limit, deflate: deflate ? PerMessageDeflate(.init()) : nil)
        let (all, used) = bytes.withUnsafeBytes { whole.feed($0) }
        precondition(used <= bytes.count)
        var pieces = WebSocketReader(maxMessage: limit, deflate: deflate ? PerMessageDeflate(.init()) : nil)
        var buffer: [UInt8] = []
        var events: [WebSocketReader.Event] = []
        var at = 0
        while at < bytes.count && !pieces.failed {
            buffer += bytes[at..<min(bytes.count, at + step)]
            at += step
            let (more, n) = buffer.withUnsafeBytes { pieces.feed($0) }
            events += more
            buffer.removeFirst(n)
        }
        precondition(events == all, "events differ when the bytes come in pieces of \(step)")
        for event in all {
            switch event {
            case .message(.text(let text)): precondition(text.utf8.count <= limit)
            case .message(.binary(let data)): precondition(data.count <= limit)
            case .ping(let payload), .pong(let payload): precondition(payload.count <= 125)
            default: break
            }
        }
        for event in all.dropLast() {
            if case .close = event { preconditionFailure("an event after a close") }
            if case .fail = event { preconditionFailure("an event after a failure") }
        }
    }
}
