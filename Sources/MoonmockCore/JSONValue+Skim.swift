import CJSONSkim
import Foundation

extension JSONValue {
    /// The string value of `key` in a top-level JSON object, found without building the document:
    /// other members are checked, not decoded. `nil` when the bytes are not a JSON object
    /// ``init(parsing:maxDepth:)`` would accept, the key is missing or its value is not a string.
    /// Always the same answer as parsing the document and reading the key (of duplicate keys the
    /// last wins). Used on the GraphQL hot path for `operationName`: a body that names an
    /// operation but is not JSON (cut short, say) names none, as it would for a GraphQL server.
    ///
    /// ```swift
    /// JSONValue.topLevelString("operationName", in: Array(#"{"query":"…","operationName":"GetUser"}"#.utf8))   // "GetUser"
    /// JSONValue.topLevelString("operationName", in: Array(#"{"operationName":"GetUser","vari"#.utf8))       // nil
    /// ```
    public static func topLevelString(_ key: String, in bytes: [UInt8]) -> String? {
        var key = key
        // The key's bytes in place (no array per call: this runs for every GraphQL request).
        return key.withUTF8 { target in bytes.withUnsafeBufferPointer { b -> String? in
            guard let base = b.baseAddress else { return nil }
            var member = mm_json_skim_result()
            guard mm_json_skim(base, b.count, target.baseAddress, target.count, Int32(maxParseDepth), &member) == 1 else { return nil }
            if member.escaped_key != 0 {
                // A key spelled with escapes may be `key` too: the parser decides (rare).
                guard case .object(let object)? = try? JSONValue(parsing: b) else { return nil }
                return object[String(decoding: target, as: UTF8.self)]?.stringValue
            }
            guard member.found == 1 else { return nil }
            let range = member.start..<member.end
            if member.escaped != 0 { return (try? JSONValue(parsing: b[(range.lowerBound - 1)...range.upperBound]))?.stringValue }
            return String(decoding: b[range], as: UTF8.self)
        } }
    }
}
