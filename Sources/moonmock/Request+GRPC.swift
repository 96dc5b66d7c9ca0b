import Foundation
import MoonmockCore

/// `moonmock request SCRIPT GRPC pkg.Service/Method -d '{json}'`: a call by name, sent to the
/// engine in Connect's streaming JSON (any kind of method takes it), printed as its status and
/// its messages, one JSON document per line. `-d` takes one message, or a JSON array of them
/// for client and bidirectional streaming.
extension Request {
    static func grpcRequest(method path: String, body: [UInt8], headers: HTTPHeaders) throws -> MockRequest {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard trimmed.contains("/"), !trimmed.contains("://") else {
            throw UsageError("a gRPC method is pkg.Service/Method, got '\(path)'")
        }
        let value: JSONValue
        do { value = body.isEmpty ? .object([:]) : try JSONValue(parsing: body) } catch {
            throw UsageError("-d must be the message as JSON (or an array of messages): \(error)")
        }
        var messages: [JSONValue] = [value]
        if case .array(let list) = value { messages = list }
        var headers = headers
        headers["Content-Type"] = "application/connect+json"
        headers["Connect-Protocol-Version"] = "1"
        return MockRequest(method: "POST", url: "/" + trimmed, headers: headers,
                           body: messages.flatMap { RPCFraming.envelope($0.encoded()) })
    }

    /// Prints the call's outcome; the exit status is 0, or 22 with `--fail` and a status other than OK.
    static func printGRPC(_ response: MockResponse, fail: Bool, wait: Bool) -> Int32 {
        var body = response.body
        if case .stream(let plan)? = response.fault {
            body = []
            let cursor = plan.start()
            while let step = cursor.next() {
                switch step {
                case .send(let bytes): body += bytes
                case .wait(let ms):
                    MoonmockCLI.printError("* \(Int(ms.rounded())) ms")
                    if wait { usleep(useconds_t(min(ms, 3_600_000) * 1000)) }
                }
            }
        }
        guard response.fault == nil || response.stream != nil, let envelopes = try? RPCFraming.envelopes(body) else {
            MoonmockCLI.printError("* not a gRPC answer (HTTP \(response.status)):")
            FileHandle.standardOutput.write(Data(body))
            return 1
        }
        var code = 0, message = ""
        var lines: [String] = []
        for envelope in envelopes {
            if envelope.flags & RPCFraming.connectEnd != 0 {
                let end = try? JSONValue(parsing: envelope.payload)
                if let error = end?["error"] {
                    code = RPCStatus.code(named: error["code"]?.stringValue ?? "unknown") ?? 2
                    message = error["message"]?.stringValue ?? ""
                }
            } else {
                lines.append(String(decoding: envelope.payload, as: UTF8.self))
            }
        }
        let name = RPCStatus.names.indices.contains(code) ? RPCStatus.names[code] : "UNKNOWN"
        var out = "grpc-status: \(code) \(name)" + (message.isEmpty ? "" : ": \(message)") + "\n"
        for line in lines { out += line + "\n" }
        FileHandle.standardOutput.write(Data(out.utf8))
        return fail && code != 0 ? 22 : 0
    }
}
