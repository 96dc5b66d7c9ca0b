import CMicroHTTPD
import Foundation
import MoonmockCore

extension MoonmockServer {
    /// Sends `response`, or acts out its fault on the wire:
    /// - `connection_reset`: a TCP RST (`connect(AF_UNSPEC)` on the socket, then close);
    /// - `empty_response`: the connection closes without a byte;
    /// - `malformed_chunk`: a chunked body cut off mid-stream;
    /// - `timeout`: the connection is held and never answered (until the client gives up or
    ///   the server stops);
    /// - `dribble`: the body at N bytes per second, the connection parked between slices;
    /// - a Swift `failure(error)` stub, which cannot travel over the wire: a reset.
    func deliver(_ connection: OpaquePointer, _ r: ServerRequest, _ response: MockResponse) -> MHD_Result {
        switch response.fault {
        case nil:
            return queue(connection, response)
        case .connectionReset?, .error?:
            let fd = mm_connection_fd(connection)
            if fd >= 0 { mm_reset_socket(fd) }
            return MHD_Result.NO
        case .emptyResponse?:
            return MHD_Result.NO
        case .timeout?:
            if isStopping { return MHD_Result.NO }
            held.withLock { $0[ObjectIdentifier(r)] = HeldConnection(connection: connection, request: r) }
            MHD_suspend_connection(connection)
            return MHD_Result.YES
        case .malformedChunk?:
            let reader = BodyReader(body: response.body.isEmpty ? Array("{\"partial\":".utf8) : response.body,
                                    connection: connection, mode: .truncated)
            return queue(connection, response, reader: reader, size: mm_size_unknown())
        case .dribble(let bytesPerSecond)?:
            let reader = BodyReader(body: response.body, connection: connection, mode: .dribble(bytesPerSecond: max(1, bytesPerSecond)))
            return queue(connection, response, reader: reader, size: UInt64(response.body.count))
        }
    }

    /// Queues a response whose body comes from `reader`.
    private func queue(_ connection: OpaquePointer, _ response: MockResponse, reader: BodyReader, size: UInt64) -> MHD_Result {
        let cls = Unmanaged.passRetained(reader).toOpaque()
        guard let mhd = MHD_create_response_from_callback(size, 4096, readBody, cls, freeBodyReader) else {
            Unmanaged<BodyReader>.fromOpaque(cls).release()
            return MHD_Result.NO
        }
        defer { MHD_destroy_response(mhd) }
        addHeaders(mhd, response.headers)
        return MHD_queue_response(connection, UInt32(response.status), mhd)
    }
}

/// Produces a fault's body for libmicrohttpd, slice by slice.
final class BodyReader: @unchecked Sendable {
    enum Mode {
        case truncated
        case dribble(bytesPerSecond: Int)
    }

    let body: [UInt8]
    let connection: OpaquePointer
    let mode: Mode
    var nextSlice: UInt64 = 0

    init(body: [UInt8], connection: OpaquePointer, mode: Mode) {
        self.body = body
        self.connection = connection
        self.mode = mode
    }

    func read(_ position: Int, _ buffer: UnsafeMutablePointer<CChar>, _ max: Int) -> Int {
        switch mode {
        case .truncated:
            // Half the body in a proper chunk, then the stream breaks off without its last chunk.
            let half = Swift.max(1, body.count / 2)
            guard position < half else { return mm_reader_error() }
            return copy(position, Swift.min(half - position, max), buffer)
        case .dribble(let bytesPerSecond):
            guard position < body.count else { return mm_reader_end() }
            let now = DispatchTime.now().uptimeNanoseconds
            if now < nextSlice {
                // Not yet: park the connection until the next slice is due (no busy loop, no thread).
                MHD_suspend_connection(connection)
                let c = UncheckedConnection(connection)
                DispatchQueue.global().asyncAfter(deadline: .init(uptimeNanoseconds: nextSlice)) { MHD_resume_connection(c.pointer) }
                return 0
            }
            let slice = Swift.max(1, Swift.min(bytesPerSecond / 10, max, body.count - position))
            nextSlice = now + UInt64(Double(slice) / Double(bytesPerSecond) * 1e9)
            return copy(position, slice, buffer)
        }
    }

    private func copy(_ position: Int, _ count: Int, _ buffer: UnsafeMutablePointer<CChar>) -> Int {
        body.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + position, byteCount: count)
        }
        return count
    }
}

private func readBody(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int) -> Int {
    guard let cls, let buffer else { return mm_reader_error() }
    return Unmanaged<BodyReader>.fromOpaque(cls).takeUnretainedValue().read(Int(position), buffer, max)
}

private func freeBodyReader(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<BodyReader>.fromOpaque(cls).release()
}
