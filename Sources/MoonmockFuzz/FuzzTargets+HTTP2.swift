import MoonmockCore
@testable import MoonmockServer

extension FuzzTargets {
    /// An HTTP/2 session fed a client's frames (after the preface), cut into reads every N
    /// bytes (N from the first byte): each whole request is answered (a body, and trailers for
    /// every other stream), and what the session writes is drained after each read. What
    /// must hold: nothing crashes; what is written is a sequence of whole frames no larger than
    /// the default maximum; a stream is handed out once; the body bytes the session holds never
    /// go below zero nor past its bound; the streams open stay within the advertised limit.
    static func http2(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let bytes = HTTP2Preface.bytes + Array(input.dropFirst())
        let step = Int(first % 64) + 1
        var limits = HTTP2Session.Limits()
        limits.maxBodyBytes = 4096
        limits.maxConnectionBodyBytes = 16 * 1024
        guard let session = HTTP2Session(limits: limits) else { return }
        var written: [UInt8] = []
        var seen = Set<Int32>()
        var at = 0
        while at < bytes.count {
            let end = min(bytes.count, at + step)
            let fine = bytes[at..<end].withUnsafeBytes { session.receive($0) }
            at = end
            for stream in session.ready {
                precondition(seen.insert(stream.id).inserted, "stream \(stream.id) handed out twice")
                precondition(stream.body.count <= limits.maxBodyBytes)
                if stream.isClosed { continue }
                stream.out = Array(repeating: UInt8(ascii: "x"), count: Int(stream.id % 5) * 7000)
                stream.finished = true
                if stream.id % 2 == 1 && stream.id % 4 == 1 { stream.trailers = [("grpc-status", "0")] }
                session.respond(stream, status: 200, fields: [("content-type", "text/plain")], body: !stream.out.isEmpty)
            }
            session.ready.removeAll()
            session.closed.removeAll()
            precondition(session.bodyBytes >= 0 && session.bodyBytes <= limits.maxConnectionBodyBytes, "body bytes \(session.bodyBytes)")
            precondition(session.streams.count <= Int(limits.maxConcurrentStreams) + 1, "\(session.streams.count) streams open")
            session.drain(into: &written, limit: 1 << 20)
            if !fine { break }
        }
        session.drain(into: &written, limit: 1 << 20)
        // Whole frames, each within SETTINGS_MAX_FRAME_SIZE's default (the client set no other).
        var i = 0
        while i < written.count {
            precondition(i + 9 <= written.count, "a frame header cut short")
            let length = Int(written[i]) << 16 | Int(written[i + 1]) << 8 | Int(written[i + 2])
            precondition(length <= 16384 || written[i + 3] == 7, "a \(length)-byte frame")
            i += 9 + length
        }
        precondition(i == written.count, "a frame cut short")
    }
}
