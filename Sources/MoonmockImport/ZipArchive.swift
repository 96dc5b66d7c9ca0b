import MoonmockCodings

/// The members of a `.zip` file (what Playwright writes for `recordHar: { path: "x.zip" }`: the
/// HAR and its attachments): stored and deflated members, read through the central directory.
/// Zip64, encryption and spanned archives are refused with a message saying so.
///
/// ```swift
/// let zip = try ZipArchive(Array(data))
/// let har = try zip.member("har.har")   // its bytes, inflated
/// ```
struct ZipArchive {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private struct Entry {
        let method: Int
        let flags: Int
        let compressedSize: Int
        let size: Int
        let localOffset: Int
    }

    private let bytes: [UInt8]
    private var entries: [String: Entry] = [:]
    /// Member names in the order of the central directory.
    private(set) var names: [String] = []

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        // The end-of-central-directory record: within the last 64 KiB + 22 bytes.
        var eocd = -1
        var i = bytes.count - 22
        while i >= max(0, bytes.count - 65_557) {
            if u32(i) == 0x0605_4B50 { eocd = i; break }
            i -= 1
        }
        guard eocd >= 0 else { throw Failure(description: "not a zip file (no end of central directory)") }
        let count = u16(eocd + 10), size = u32(eocd + 12), offset = u32(eocd + 16)
        guard count != 0xFFFF, size != 0xFFFF_FFFF, offset != 0xFFFF_FFFF else { throw Failure(description: "zip64 archives are not read") }
        var at = offset
        for _ in 0..<count {
            guard at + 46 <= bytes.count, u32(at) == 0x0201_4B50 else { throw Failure(description: "a broken central directory") }
            let nameLength = u16(at + 28), extra = u16(at + 30), comment = u16(at + 32)
            guard at + 46 + nameLength <= bytes.count else { throw Failure(description: "a broken central directory") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            entries[name] = Entry(method: u16(at + 10), flags: u16(at + 8), compressedSize: u32(at + 20), size: u32(at + 24),
                                  localOffset: u32(at + 42))
            names.append(name)
            at += 46 + nameLength + extra + comment
        }
    }

    /// The bytes of member `name`; `nil` when there is none.
    func member(_ name: String) throws -> [UInt8]? {
        guard let entry = entries[name] else { return nil }
        guard entry.flags & 1 == 0 else { throw Failure(description: "\(name) is encrypted") }
        let local = entry.localOffset
        guard local + 30 <= bytes.count, u32(local) == 0x0403_4B50 else { throw Failure(description: "\(name): a broken local header") }
        let start = local + 30 + u16(local + 26) + u16(local + 28)
        guard start + entry.compressedSize <= bytes.count else { throw Failure(description: "\(name) is cut short") }
        let data = Array(bytes[start..<(start + entry.compressedSize)])
        switch entry.method {
        case 0: return data
        case 8:
            do { return try ContentDecoding.inflateRaw(data, limit: entry.size + 1024) } catch {
                throw Failure(description: "\(name): \(error)")
            }
        default: throw Failure(description: "\(name): compression method \(entry.method) is not read (stored and deflate are)")
        }
    }

    private func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
    private func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
}
