import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// Mockingjay's API over Moonmock: `stub(matcher, builder)` with Mockingjay's matchers and
/// builders, stubs removed at the end of each XCTest test (and of each Swift Testing test with
/// the ``Trait/mockingjay`` trait). Code written for Mockingjay compiles with only its
/// `import` changed.
///
/// ```swift
/// import MoonmockMockingjay
///
/// let body = ["user": "Kyle"]
/// stub(uri("/{user}/{repository}"), json(body))
/// let (data, _) = try await URLSession.shared.data(from: URL(string: "https://api.example.com/kylef/Mockingjay")!)
/// ```
///
/// Stubs answer `URLSession.shared` and sessions whose configuration went through
/// ``MockingjayProtocol/install(into:)``. A request no stub matches is left to the next
/// protocol of the session (the network, usually), as with Mockingjay. The newest stub that
/// matches answers.

/// Whether a stub answers a request.
public typealias Matcher = @Sendable (URLRequest) -> Bool
/// What a stub answers.
public typealias Builder = @Sendable (URLRequest) -> Response

/// A stub's answer: a response with its body, or an error the task fails with.
public enum Response: Sendable, Equatable {
    case success(URLResponse, Download)
    case failure(NSError)

    public static func == (a: Response, b: Response) -> Bool {
        switch (a, b) {
        case let (.success(r1, d1), .success(r2, d2)): return r1 === r2 && d1 == d2
        case let (.failure(e1), .failure(e2)): return e1 == e2
        default: return false
        }
    }
}

/// A response's body.
public enum Download: Sendable, Equatable {
    /// No body.
    case noContent
    /// The whole body at once.
    case content(Data)
    /// The body in pieces of `inChunksOf` bytes, delivered over time (a slow network).
    case streamContent(data: Data, inChunksOf: Int)
}

/// A stub returned by ``stub(_:_:)``; pass it to ``removeStub(_:)``.
public struct Stub: Sendable, Equatable {
    let handle: StubHandle
    /// The stub's id (for the journal of ``MockingjayProtocol/moonmock``).
    public var name: String { handle.name }
}

/// Answers requests that `matcher` accepts with `builder` (the newest matching stub wins).
///
/// ```swift
/// stub(http(.put, uri: "/kylef/Mockingjay"), json(["description": "Kyle"]))
/// ```
@discardableResult
public func stub(_ matcher: @escaping Matcher, _ builder: @escaping Builder) -> Stub {
    MockingjayProtocol.addStub(matcher, builder)
}

/// Removes one stub.
public func removeStub(_ stub: Stub) {
    MockingjayProtocol.removeStub(stub)
}

/// Removes every stub.
public func removeAllStubs() {
    MockingjayProtocol.removeAllStubs()
}

/// The one Moonmock instance behind the free functions, and how a session of your own reaches it.
///
/// ```swift
/// let configuration = URLSessionConfiguration.ephemeral
/// MockingjayProtocol.install(into: configuration)
/// let session = URLSession(configuration: configuration)
/// ```
public enum MockingjayProtocol {
    /// The instance answering for the stubs: its journal (`requests`), `verify`, and the rest
    /// of Moonmock's API are there to use.
    public static let moonmock: Moonmock = {
        let moonmock = Moonmock()
        moonmock.unmatchedPolicy = .leaveUnclaimed
        return moonmock
    }()

    /// Routes the sessions made from `configuration` to the stubs.
    public static func install(into configuration: URLSessionConfiguration) {
        moonmock.install(into: configuration)
    }

    /// Whether a stub answers `request`, as Mockingjay's protocol class says: `false` when none
    /// matches, and then the configuration's next protocol class gets the request.
    ///
    /// ```swift
    /// MockingjayProtocol.canInit(with: URLRequest(url: URL(string: "https://kylefuller.co.uk/")!))   // false: no stub
    /// ```
    public static func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return moonmock.engine.wouldAnswer(MockRequest(request))
    }

    /// Mockingjay's spelling: `MockingjayProtocol.addStub(matcher: { _ in true }) { request in … }`.
    @discardableResult
    public static func addStub(matcher: @escaping Matcher, builder: @escaping Builder) -> Stub {
        addStub(matcher, builder)
    }

    /// The stubs added inside a ``Trait/mockingjay`` scope, to remove at its end.
    @TaskLocal static var scope: StubScope?

    @discardableResult
    public static func addStub(_ matcher: @escaping Matcher, _ builder: @escaping Builder) -> Stub {
        watchXCTestCases()
        // URLSession.shared goes to the stubs from now on (again, if another instance took it).
        if !moonmock.isInstalledGlobally { moonmock.installGlobally() }
        let handle = moonmock.stub(.request("Mockingjay matcher") { matcher(URLRequest($0)) },
                                   .dynamic { request, _ in builder(URLRequest(request)).mockResponse })
        scope?.add(handle)
        return Stub(handle: handle)
    }

    public static func removeStub(_ stub: Stub) {
        moonmock.removeStub(stub.handle)
    }

    public static func removeAllStubs() {
        moonmock.removeAllStubs()
    }
}

/// The stubs of one scoped test.
final class StubScope: Sendable {
    private let handles = Locked<[StubHandle]>([])
    func add(_ handle: StubHandle) { handles.withLock { $0.append(handle) } }
    func removeAll() {
        for handle in handles.withLock({ $0 }) { MockingjayProtocol.moonmock.removeStub(handle) }
    }
}

extension Response {
    /// The answer as Moonmock delivers it.
    var mockResponse: MockResponse {
        switch self {
        case .failure(let error):
            return .fault(.error(TransportFailure(error)))
        case .success(let response, let download):
            let http = response as? HTTPURLResponse
            var headers = HTTPHeaders()
            for case let (name as String, value as String) in http?.allHeaderFields ?? [:] { headers.add(name, value) }
            var answer = MockResponse(status: http?.statusCode ?? 200, headers: headers)
            switch download {
            case .noContent: break
            case .content(let data): answer.body = [UInt8](data)
            case .streamContent(let data, let chunk):
                // Ten pieces a second, each `chunk` bytes: the body arrives over time.
                answer.body = [UInt8](data)
                answer.fault = .dribble(bytesPerSecond: max(1, chunk) * 10)
            }
            return answer
        }
    }
}
