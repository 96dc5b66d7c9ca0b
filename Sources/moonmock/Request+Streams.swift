import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

extension Request {
    /// A streamed answer: the head, then each chunk as it comes (waiting as the server would,
    /// unless `--no-delay`), each wait noted on stderr. A stream kept open stops after its last chunk.
    static func printStream(_ response: MockResponse, _ plan: StreamPlan, head: Bool, wait: Bool) -> Int32 {
        var out = "HTTP/1.1 \(response.status) \(response.reasonPhrase)\r\n"
        for field in response.headers where !field.name.equalsIgnoringASCIICase("content-length") {
            out += "\(field.name): \(field.value)\r\n"
        }
        out += "Transfer-Encoding: chunked\r\n\r\n"
        FileHandle.standardOutput.write(Data(out.utf8))
        if head { return 0 }
        let cursor = plan.start()
        var sent = 0
        while let step = cursor.next() {
            switch step {
            case .send(let bytes):
                FileHandle.standardOutput.write(Data(bytes))
                if cursor.transcript.chunks > sent { sent = cursor.transcript.chunks }
            case .wait(let milliseconds):
                if sent >= plan.chunks.count && !plan.closes {
                    MoonmockCLI.printError("* the stream stays open (close = false); moonmock request stops here")
                    return 0
                }
                MoonmockCLI.printError("* \(Int(milliseconds.rounded())) ms")
                if wait { usleep(useconds_t(min(milliseconds, 3_600_000) * 1000)) }
            }
        }
        if let error = cursor.transcript.error {
            MoonmockCLI.printError("* the stream ended on an error: \(error)")
            return 1
        }
        return 0
    }
}
