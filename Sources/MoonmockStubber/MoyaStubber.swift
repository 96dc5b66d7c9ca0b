import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// moya-stubber's API over Moonmock: a stubs folder (one sub-folder per endpoint, files
/// `NAME.STATUS[.EXT]`, root files offered to every endpoint, a built-in timeout) with one stub
/// active per endpoint, switched at runtime, and one global delay.
///
/// Moya's endpoint and sample-response closures have no Linux counterpart, so the stubber works
/// at the URLSession level: each endpoint folder is given the request pattern it answers, and
/// sessions are routed to the stubber with ``install(into:)``.
///
/// ```swift
/// import MoonmockStubber
///
/// try MoyaStubber.shared.setStubsBundle(stubsBundle, endpoints: ["getUser": "GET /users/:id"])
/// try MoyaStubber.shared.activate(stubNamed: "ok.200.json", forEndpointNamed: "getUser")
/// MoyaStubber.shared.delay = 0.5
/// let configuration = URLSessionConfiguration.ephemeral
/// MoyaStubber.shared.install(into: configuration)
/// ```
///
/// A request whose endpoint has no active stub (or that no endpoint matches) goes to the
/// network, as a Moya provider that does not stub it.
public final class MoyaStubber: Sendable {
    /// The shared stubber. It has no stubs until ``setStubsBundle(_:endpoints:)``.
    public static let shared = MoyaStubber()

    /// The instance that answers: its journal (`requests`), `verify`, and the rest of
    /// Moonmock's API are there to use.
    public let moonmock: Moonmock

    private let folder = Locked<URL?>(nil)

    /// A stubber without stubs.
    public init() {
        moonmock = Moonmock()
        moonmock.unmatchedPolicy = .leaveUnclaimed
    }

    /// A stubber serving the stubs folder of `stubsBundle`, its endpoints found from its folders
    /// (see ``setStubsBundle(_:)``).
    public convenience init(stubsBundle: Bundle) throws {
        self.init()
        try setStubsBundle(stubsBundle)
    }

    /// A stubber serving the stubs folder of `stubsBundle`.
    public convenience init(stubsBundle: Bundle, endpoints: [String: String]) throws {
        self.init()
        try setStubsBundle(stubsBundle, endpoints: endpoints)
    }

    /// The simulated network delay added to every active stub's answer, in seconds.
    public var delay: TimeInterval {
        get { moonmock.stubDelay }
        set { moonmock.stubDelay = newValue }
    }

    /// Serves the stubs folder at `bundle`'s root: `endpoints` maps each endpoint folder to the
    /// requests it answers (`"GET /users/:id"`). Every endpoint starts without an active stub.
    public func setStubsBundle(_ bundle: Bundle, endpoints: [String: String]) throws {
        try setStubsFolder(bundle.resourceURL ?? bundle.bundleURL, endpoints: endpoints)
    }

    /// Serves the stubs folder at `bundle`'s root, as moya-stubber's README loads it: every
    /// sub-folder is an endpoint. With no request pattern given, an endpoint answers through
    /// ``sampleResponse(forEndpointNamed:)`` (what a Moya `endpointClosure` asks for a target);
    /// give patterns with ``setStubsBundle(_:endpoints:)`` to answer URLSession requests too.
    ///
    /// ```swift
    /// try MoyaStubber.shared.setStubsBundle(stubsBundle)
    /// try MoyaStubber.shared.activate(stubNamed: "ok.200.json", forEndpointNamed: "getUser")
    /// MoyaStubber.shared.sampleResponse(forEndpointNamed: "getUser")?.statusCode   // 200
    /// ```
    public func setStubsBundle(_ bundle: Bundle) throws {
        let root = bundle.resourceURL ?? bundle.bundleURL
        let names = (try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: [.isDirectoryKey]))?
            .filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true }
            .map(\.lastPathComponent).filter { !$0.hasPrefix(".") } ?? []
        // A path no app request takes: the endpoint is reached by its name only.
        try setStubsFolder(root, endpoints: Dictionary(uniqueKeysWithValues: names.map { ($0, "GET \(Self.namedPath)\($0)") }))
    }

    /// Where an endpoint without a request pattern is asked for its active stub.
    private static let namedPath = "/__moya-stubber/"

    /// The active stub's answer for an endpoint, as Moya's `sampleResponseClosure` wants it;
    /// `nil` when none is active (the timeout stub included: it never answers).
    public func sampleResponse(forEndpointNamed endpoint: String) -> (statusCode: Int, data: Data)? {
        guard let active = moonmock.variants.first(where: { $0.rule == endpoint })?.active, active != "timeout" else { return nil }
        // A path the endpoint's pattern matches: its parameters filled in.
        let pattern = moonmock.engine.allRules.first { $0.id == endpoint }?.pattern.source ?? (Self.namedPath + endpoint)
        guard pattern.hasPrefix("/") else { return nil }
        let path = pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") || segment.hasPrefix("{") || segment.hasPrefix("*") ? "1" : String(segment)
        }.joined(separator: "/")
        let response = moonmock.engine.handle(MockRequest(method: "GET", url: "http://moya-stubber.local" + path)).response
        return response.fault == nil ? (response.status, Data(response.body)) : nil
    }

    /// ``setStubsBundle(_:endpoints:)`` with a folder.
    public func setStubsFolder(_ url: URL, endpoints: [String: String]) throws {
        let table = endpoints.sorted { $0.key < $1.key }
            .map { "\(LuaLiteral.key($0.key)) = \(LuaLiteral.string($0.value))" }.joined(separator: ", ")
        try moonmock.load(lua: "mock.stubs(\".\", { \(table) })\n", baseDirectory: url)
        moonmock.resetStubs()
        folder.withLock { $0 = url }
    }

    /// Routes the sessions made from `configuration` to the stubs.
    public func install(into configuration: URLSessionConfiguration) {
        moonmock.install(into: configuration)
    }

    /// The endpoints and the stubs each offers, as moya-stubber lists them: the root's stubs
    /// (generic, `G:` in their display name) first, then the timeout, then the endpoint's own,
    /// each group by file name.
    public var stubbableEndpoints: [StubbableEndpoint] {
        let root = folder.withLock { $0 }
        return moonmock.variants.map { variants in
            let own = root.map { Set((try? FileManager.default.contentsOfDirectory(atPath: $0.appendingPathComponent(variants.rule).path)) ?? []) } ?? []
            let stubs = variants.names.map { name in
                name == "timeout" ? Stub.timeoutError : Stub(fileName: name, isGeneric: !own.contains(name))
            }
            let ordered = stubs.filter { $0.isGeneric && $0.fileName != nil } + stubs.filter { $0.fileName == nil } + stubs.filter { !$0.isGeneric }
            return StubbableEndpoint(name: variants.rule, availableStubs: ordered)
        }
    }

    /// Activates `stub` for an endpoint; `nil` deactivates it.
    public func activate(stub: Stub?, forEndpoint endpoint: String) {
        if let stub {
            try? moonmock.activateStub(stub.fileName ?? "timeout", for: endpoint)
        } else {
            deactivateStub(forEndpoint: endpoint)
        }
    }

    /// Activates the stub with this file name (`ok.200.json`, or `timeout`) for an endpoint.
    public func activate(stubNamed name: String, forEndpoint endpoint: String) throws {
        try moonmock.activateStub(name, for: endpoint)
    }

    /// ``activate(stubNamed:forEndpoint:)`` spelled as the endpoint's name.
    public func activate(stubNamed name: String, forEndpointNamed endpoint: String) throws {
        try activate(stubNamed: name, forEndpoint: endpoint)
    }

    /// Leaves an endpoint without an active stub: its requests go to the network.
    public func deactivateStub(forEndpoint endpoint: String) {
        try? moonmock.deactivateStub(for: endpoint)
    }

    /// ``deactivateStub(forEndpoint:)`` spelled as the endpoint's name.
    public func deactivateStub(forEndpointNamed endpoint: String) {
        deactivateStub(forEndpoint: endpoint)
    }

    /// The stub an endpoint answers with now, if any.
    public func activeStub(forEndpointName endpoint: String) -> Stub? {
        guard let active = moonmock.variants.first(where: { $0.rule == endpoint })?.active else { return nil }
        return stubbableEndpoints.first { $0.name == endpoint }?.availableStubs.first { ($0.fileName ?? "timeout") == active }
    }
}

/// An endpoint with stubs in the stubs folder.
public struct StubbableEndpoint: Sendable, Equatable {
    public let name: String
    public let availableStubs: [Stub]
}

/// One stub an endpoint offers.
public struct Stub: Sendable, Equatable {
    /// `"ok 200 (json)"`; a root (generic) stub's starts with `"G: "`.
    public let displayName: String
    /// The file (`ok.200.json`); `nil` for the timeout.
    public let fileName: String?
    /// The status its file name gives; `nil` for the timeout.
    public let statusCode: Int?
    /// Whether the stub comes from the folder's root, offered to every endpoint.
    public let isGeneric: Bool

    /// The built-in stub that never answers: the request times out.
    public static let timeoutError = Stub(displayName: "Timeout", fileName: nil, statusCode: nil, isGeneric: true)

    init(displayName: String, fileName: String?, statusCode: Int?, isGeneric: Bool) {
        self.displayName = displayName
        self.fileName = fileName
        self.statusCode = statusCode
        self.isGeneric = isGeneric
    }

    init(fileName: String, isGeneric: Bool) {
        let parts = fileName.split(separator: ".", maxSplits: 2).map(String.init)
        let status = parts.count > 1 ? Int(parts[1]) : nil
        var display = (isGeneric ? "G: " : "") + (parts.first ?? fileName)
        if let status { display += " \(status)" }
        if parts.count > 2 { display += " (\(parts[2]))" }
        self.init(displayName: display, fileName: fileName, statusCode: status, isGeneric: isGeneric)
    }
}
