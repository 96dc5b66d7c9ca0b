import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// anfema MockingBird's API over Moonmock: Mock-Bundle folders (`bundle.json` and the files it
/// names) answering the sessions registered with MockingBird. Code written for MockingBird
/// compiles with only its `import` changed.
///
/// ```swift
/// import MoonmockMockingBird
///
/// let configuration = URLSessionConfiguration.default
/// MockingBird.register(inConfig: configuration)
/// let session = URLSession(configuration: configuration)
/// try MockingBird.setMockBundle(withPath: bundlesFolder + "/httpbin")
/// ```
///
/// MockingBird's semantics, kept: a request the bundle has no entry for goes to the network
/// (the next protocol of the session), or gets `501` while ``handleAllRequests`` is on; with
/// no bundle set (`nil`) every request goes to the network. `bundle.json` semantics are
/// Moonmock's Mock-Bundle (docs/language.md, "Folders of mocks"): a `file` without a
/// `mime_type` is `application/octet-stream`.
public final class MockingBird: Sendable {
    /// What ``setMockBundle(withPath:)`` throws, as MockingBird names it; ``lastError`` says
    /// what exactly was wrong.
    public enum MBError: Error, Sendable {
        case mockBundleNotFound
        case invalidMockBundle
        case invalidBundleDescriptionFile
    }

    /// The instance that answers: its journal (`requests`), `verify`, and the rest of
    /// Moonmock's API are there to use.
    public static let moonmock: Moonmock = {
        let moonmock = Moonmock()
        moonmock.unmatchedPolicy = .leaveUnclaimed
        return moonmock
    }()

    private static let detail = Locked<String?>(nil)

    /// The reason the last ``setMockBundle(withPath:)`` failed (a file and what is wrong in it).
    public static var lastError: String? { detail.withLock { $0 } }

    /// While `true`, a request the bundle has no entry for is answered `501 Not Implemented`
    /// instead of going to the network. Switchable at any time.
    public static var handleAllRequests: Bool {
        get { moonmock.bundleHandlesAllRequests }
        set { moonmock.bundleHandlesAllRequests = newValue }
    }

    /// Puts MockingBird in front of `config`'s protocols: sessions made from it afterwards are
    /// answered from the bundle.
    public class func register(inConfig config: URLSessionConfiguration) {
        moonmock.install(into: config)
    }

    /// Puts MockingBird in front of a session's protocols, for its tasks created afterwards.
    public class func register(inSession session: URLSession) {
        let classes = (session.configuration.protocolClasses ?? []).filter { $0 != moonmock.protocolClass }
        session.configuration.protocolClasses = [moonmock.protocolClass] + classes
    }

    /// The Mock-Bundle folder to answer from (any path, usually inside the test bundle's
    /// resources); `nil` for none.
    public class func setMockBundle(withPath bundlePath: String?) throws {
        guard let bundlePath else {
            try moonmock.setMockBundle(nil)
            return
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: bundlePath, isDirectory: &isDirectory), isDirectory.boolValue else {
            detail.withLock { $0 = "no Mock-Bundle folder at \(bundlePath)" }
            throw MBError.mockBundleNotFound
        }
        do {
            try moonmock.setMockBundle(URL(fileURLWithPath: bundlePath))
            detail.withLock { $0 = nil }
        } catch {
            detail.withLock { $0 = String(describing: error) }
            throw FileManager.default.fileExists(atPath: bundlePath + "/bundle.json") ? MBError.invalidBundleDescriptionFile : MBError.invalidMockBundle
        }
    }

    /// The spellings of MockingBird's README: `registerInSession(_:)`, `registerInConfig(_:)`, `setMockBundle(_:)`.
    public class func registerInSession(_ session: URLSession) { register(inSession: session) }
    public class func registerInConfig(_ config: URLSessionConfiguration) { register(inConfig: config) }
    public class func setMockBundle(_ bundlePath: String?) throws { try setMockBundle(withPath: bundlePath) }
}
