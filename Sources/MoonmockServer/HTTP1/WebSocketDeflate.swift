import CZlib
import Foundation

/// permessage-deflate (RFC 7692) for one socket: the parameters agreed with the client, and a
/// raw-deflate stream each way (zlib), kept across messages unless a `*_no_context_takeover`
/// parameter was agreed.
///
/// ```swift
/// let agreed = PerMessageDeflate.Parameters.negotiate(["permessage-deflate; client_max_window_bits"])
/// agreed?.response   // "permessage-deflate"
/// ```
final class PerMessageDeflate {
    struct Parameters: Equatable {
        /// We start each message afresh (the client asked, or may ask, us to).
        var serverNoContextTakeover = false
        /// The client starts each message afresh (it offered to).
        var clientNoContextTakeover = false
        /// The window our messages may refer back to (the client's limit; 15 when it set none).
        var serverMaxWindowBits = 15
        /// Whether the client named a limit for our window (then the answer repeats it).
        var serverWindowNamed = false

        /// The `Sec-WebSocket-Extensions` value that accepts these.
        var response: String {
            var parts = ["permessage-deflate"]
            if serverNoContextTakeover { parts.append("server_no_context_takeover") }
            if clientNoContextTakeover { parts.append("client_no_context_takeover") }
            if serverWindowNamed { parts.append("server_max_window_bits=\(serverMaxWindowBits)") }
            return parts.joined(separator: "; ")
        }

        /// The first offer of permessage-deflate in the client's `Sec-WebSocket-Extensions`
        /// fields that the server can accept; `nil` when none (then no extension is used).
        /// An offer with an unknown parameter, a repeated one or a value out of range is declined.
        static func negotiate(_ fields: [String]) -> Parameters? {
            for offer in fields.flatMap(Self.splitList) {
                let parts = offer.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.first?.lowercased() == "permessage-deflate" else { continue }
                if let accepted = accept(parts.dropFirst()) { return accepted }
            }
            return nil
        }

        private static func accept(_ parameters: ArraySlice<String>) -> Parameters? {
            var agreed = Parameters()
            var seen = Set<String>()
            for parameter in parameters where !parameter.isEmpty {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                let name = pair[0].lowercased()
                let value = pair.count > 1 ? pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
                guard seen.insert(name).inserted else { return nil }
                func bits() -> Int? { value.flatMap { Int($0) }.flatMap { (8...15).contains($0) && $0.description == value ? $0 : nil } }
                switch name {
                case "server_no_context_takeover":
                    guard value == nil else { return nil }
                    agreed.serverNoContextTakeover = true
                case "client_no_context_takeover":
                    guard value == nil else { return nil }
                    agreed.clientNoContextTakeover = true
                case "server_max_window_bits":
                    guard let n = bits() else { return nil }
                    agreed.serverMaxWindowBits = n
                    agreed.serverWindowNamed = true
                case "client_max_window_bits":
                    // The client may limit its own window; we inflate with the largest, which reads any.
                    if value != nil && bits() == nil { return nil }
                default:
                    return nil
                }
            }
            return agreed
        }

        /// A header's comma-separated list, commas inside quotes kept.
        private static func splitList(_ field: String) -> [String] {
            var items: [String] = [], current = "", quoted = false
            for ch in field {
                if ch == "\"" { quoted.toggle() }
                if ch == "," && !quoted { items.append(current); current = "" } else { current.append(ch) }
            }
            items.append(current)
            return items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    enum Inflated {
        case success([UInt8])
        case tooLarge
        case bad
    }

    let parameters: Parameters
    private let deflater: UnsafeMutablePointer<z_stream>?
    private let inflater: UnsafeMutablePointer<z_stream>?

    init(_ parameters: Parameters) {
        self.parameters = parameters
        // zlib cannot keep raw deflate's references within a 256-byte window (it widens 8 to 9):
        // for a client that asks for 8, stored blocks, which refer to nothing.
        let window = max(9, parameters.serverMaxWindowBits)
        deflater = mm_deflater_new(parameters.serverMaxWindowBits == 8 ? 0 : 6, Int32(window))
        inflater = mm_inflater_new()
    }

    deinit {
        mm_deflater_free(deflater)
        mm_inflater_free(inflater)
    }

    /// `message` compressed for a frame with RSV1; `nil` if zlib failed (then it goes uncompressed).
    func deflate(_ message: [UInt8]) -> [UInt8]? {
        guard let deflater else { return nil }
        var out = mm_decoded()
        defer { mm_decoded_free(&out) }
        let status = message.withUnsafeBufferPointer {
            mm_deflater_message(deflater, $0.baseAddress, $0.count, parameters.serverNoContextTakeover ? 1 : 0, &out)
        }
        guard status == MM_DECODE_OK else { return nil }
        return Array(UnsafeBufferPointer(start: out.data, count: out.len))
    }

    /// A compressed message's bytes inflated, at most `limit` of them.
    func inflate(_ message: [UInt8], limit: Int) -> Inflated {
        guard let inflater else { return .bad }
        var out = mm_decoded()
        defer { mm_decoded_free(&out) }
        let status = message.withUnsafeBufferPointer {
            mm_inflater_message(inflater, $0.baseAddress, $0.count, limit, parameters.clientNoContextTakeover ? 1 : 0, &out)
        }
        switch status {
        case MM_DECODE_OK: return .success(out.len == 0 ? [] : Array(UnsafeBufferPointer(start: out.data, count: out.len)))
        case MM_DECODE_TOO_LARGE: return .tooLarge
        default: return .bad
        }
    }
}
