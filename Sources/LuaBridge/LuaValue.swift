/// A Lua value copied out of a VM. Strings are bytes (Lua strings are binary-safe).
///
/// ```swift
/// let v: LuaValue = .string(Array("héllo".utf8))
/// v.stringValue   // "héllo"
/// ```
public enum LuaValue: Equatable, Sendable {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string([UInt8])
    /// Table entries in traversal order (array part first, as `lua_next` gives them).
    case table([Entry])
    /// A value that cannot leave the VM (function, userdata, thread), by type name.
    case opaque(String)

    public struct Entry: Equatable, Sendable {
        public var key: LuaValue
        public var value: LuaValue
        public init(key: LuaValue, value: LuaValue) { self.key = key; self.value = value }
    }

    /// A string value from Swift text.
    public static func text(_ s: String) -> LuaValue { .string(Array(s.utf8)) }

    /// The value as text when it is a string (invalid UTF-8 is repaired) or a number.
    public var stringValue: String? {
        switch self {
        case .string(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .integer(let i): return String(i)
        case .number(let d): return String(d)
        default: return nil
        }
    }

    /// Looks up a string key in a table value.
    public subscript(key: String) -> LuaValue {
        guard case .table(let entries) = self else { return .nil }
        let k = LuaValue.text(key)
        return entries.first { $0.key == k }?.value ?? .nil
    }
}
