import COpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A certificate for HTTPS on a developer machine or in CI, signed by a local certificate
/// authority that is made once and kept in a cache folder: trust the authority's file once
/// (`curl --cacert`, `REQUESTS_CA_BUNDLE`, `NODE_EXTRA_CA_CERTS`, a simulator's keychain) and
/// every later certificate is trusted too. `moonmock serve --tls self-signed` uses it.
///
/// ```swift
/// let tls = try SelfSignedCertificate.load(names: ["api.test"])
/// var configuration = ServerConfiguration()
/// configuration.tlsCertificatePEM = tls.certificatePEM
/// configuration.tlsKeyPEM = tls.keyPEM
/// print("trust", tls.authorityFile.path)
/// ```
public struct SelfSignedCertificate: Sendable {
    /// The server certificate (PEM), for ``ServerConfiguration/tlsCertificatePEM``.
    public let certificatePEM: String
    /// Its private key (PEM), for ``ServerConfiguration/tlsKeyPEM``.
    public let keyPEM: String
    /// The local authority's certificate: what a client trusts.
    public let authorityFile: URL
    /// The names the certificate is valid for: `localhost`, `127.0.0.1`, `::1`, then the extra ones.
    public let names: [String]

    /// `$XDG_CACHE_HOME/moonmock/tls`, else `~/.cache/moonmock/tls`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return URL(fileURLWithPath: cache).appendingPathComponent("moonmock/tls")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/moonmock/tls")
    }

    /// The certificate for `localhost`, `127.0.0.1`, `::1` and `names`, from `directory` when
    /// one was made before and is good for 30 more days, else made now (and the authority with
    /// it, the first time). Safe to call from several processes at once.
    public static func load(names extra: [String] = [], directory: URL = defaultDirectory) throws -> SelfSignedCertificate {
        var names = ["localhost", "127.0.0.1", "::1"]
        for name in extra where !names.contains(name) { names.append(name) }
        for name in names where name.isEmpty || name.contains(where: { $0 == "," || $0.isWhitespace }) {
            throw ServerError.configuration("--tls-name '\(name)' is not a host name or an address")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerError.configuration("cannot create \(directory.path) for the local certificate authority (\(error.localizedDescription))")
        }
        let lock = open(directory.appendingPathComponent(".lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lock >= 0 { flock(lock, LOCK_EX) }
        defer { if lock >= 0 { close(lock) } }

        let caFile = directory.appendingPathComponent("ca.pem"), caKeyFile = directory.appendingPathComponent("ca-key.pem")
        var authority = try? (String(contentsOf: caFile, encoding: .utf8), String(contentsOf: caKeyFile, encoding: .utf8))
        if let (cert, _) = authority, mm_tls_seconds_left(cert) < 365 * 86400 { authority = nil }
        let server = directory.appendingPathComponent("server-\(fingerprint(names)).pem")
        let serverKey = directory.appendingPathComponent("server-\(fingerprint(names))-key.pem")
        if authority == nil {
            let made = try make { cert, key, message, length in
                mm_tls_make_authority("Moonmock local CA (\(ProcessInfo.processInfo.hostName))", cert, key, message, length)
            }
            try write(made.key, to: caKeyFile)
            try write(made.cert, to: caFile)
            authority = made
            // Certificates of an earlier authority would no longer be trusted.
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where file.hasPrefix("server-") {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(file))
            }
        }
        if let cert = try? String(contentsOf: server, encoding: .utf8), let key = try? String(contentsOf: serverKey, encoding: .utf8),
           mm_tls_seconds_left(cert) > 30 * 86400 {
            return SelfSignedCertificate(certificatePEM: cert, keyPEM: key, authorityFile: caFile, names: names)
        }
        let (caCert, caKey) = authority!
        let made = try make { cert, key, message, length in
            withCStrings(names) { mm_tls_make_server_certificate(caCert, caKey, $0, Int32(names.count), 365, cert, key, message, length) }
        }
        try write(made.key, to: serverKey)
        try write(made.cert, to: server)
        return SelfSignedCertificate(certificatePEM: made.cert, keyPEM: made.key, authorityFile: caFile, names: names)
    }

    private typealias Maker = (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                               UnsafeMutablePointer<CChar>, Int) -> Int32

    /// Runs one of the C makers and takes its two malloc'd PEM strings.
    private static func make(_ maker: Maker) throws -> (cert: String, key: String) {
        var cert: UnsafeMutablePointer<CChar>?, key: UnsafeMutablePointer<CChar>?
        var message = [CChar](repeating: 0, count: 512)
        let ok = message.withUnsafeMutableBufferPointer { maker(&cert, &key, $0.baseAddress!, $0.count) }
        defer { mm_tls_free_string(cert); mm_tls_free_string(key) }
        guard ok == 1, let cert, let key else {
            throw ServerError.configuration(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (String(cString: cert), String(cString: key))
    }

    /// Written beside, then renamed: a reader never sees half a file. Keys are readable by the owner only.
    private static func write(_ text: String, to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid())")
        do {
            try Data(text.utf8).write(to: temporary)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary.path)
            guard rename(temporary.path, url.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw ServerError.configuration("cannot write \(url.path) (\(error.localizedDescription))")
        }
    }

    /// FNV-1a of the names: one certificate file per set of names.
    private static func fingerprint(_ names: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in names.joined(separator: "\n").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

/// Runs `body` with `strings` as an array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
