import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore

/// MutantInjector's API over Moonmock: one global interceptor answering registered URLs with
/// JSON files. Code written for MutantInjector compiles with only its `import` changed.
///
/// ```swift
/// import MoonmockMutantInjector
///
/// MutantInjector.setupGlobalInterceptor()
/// MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200, jsonFilename: "users_success")
/// // URLSession.shared.data(from: URL(string: "https://api.example.com/users")!) answers users_success.json
/// MutantInjector.tearDownGlobalInterceptor()
/// ```
///
/// MutantInjector's semantics, kept: a mock is keyed by its whole URL, query included; the
/// first mock registered for a URL and method answers; requests without a mock go to the
/// network untouched; the log filter compares whole URLs. JSON files are found in
/// ``mockFilesDirectory`` when set, else in the test bundle (the resources SwiftPM copies
/// beside the test binary), else the main bundle.
public final class MutantInjector: Sendable {
    /// The instance that answers: its journal (`requests`), `verify`, and the rest of
    /// Moonmock's API are there to use.
    public static let moonmock = Moonmock()

    /// Where `jsonFilename:` files are looked for first (`nil`: the bundles only).
    public static var mockFilesDirectory: URL? {
        get { registry.withLock { $0.directory } }
        set { registry.withLock { $0.directory = newValue } }
    }

    struct Mock: Sendable {
        let url: String
        let method: RequestMethod
        let statusCode: Int
        let source: Source
        let parameters: AdditionalRequestParameters?
        let identifier: String?
    }

    enum Source: Sendable {
        case filename(String)
        case file(URL)
    }

    struct Registry: Sendable {
        var mocks: [Mock] = []
        var directory: URL?
        var stub: StubHandle?
        var logMode: RequestLogMode = .none
    }

    static let registry = Locked(Registry())

    /// Routes `URLSession.shared` to the mocks (and keeps routing the sessions given to
    /// ``install(into:)``).
    public class func setupGlobalInterceptor() {
        installStub()
        moonmock.installGlobally()
    }

    /// Stops routing `URLSession.shared` and forgets every mock, as MutantInjector does.
    public class func tearDownGlobalInterceptor() {
        moonmock.uninstallGlobally()
        clearAllMockResponses()
    }

    /// Forgets every mock (the interceptor stays).
    public class func clearAllMockResponses() {
        registry.withLock { $0.mocks.removeAll() }
    }

    /// Routes the sessions made from `configuration` to the mocks: the way to reach sessions
    /// of your own on Linux, where `.default` and `.ephemeral` configurations cannot be
    /// changed by a library (see docs/swift.md).
    public class func install(into configuration: URLSessionConfiguration) {
        installStub()
        moonmock.install(into: configuration)
    }

    /// Answers `url` (the whole URL, query included) with a JSON file found by name
    /// (`.json` added), for `method` (`.all`: any).
    ///
    /// ```swift
    /// MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200,
    ///                                method: .get, jsonFilename: "users_success")
    /// ```
    public class func addMockResponse(for url: String, statusCode: Int, method: RequestMethod = .all, jsonFilename: String,
                                      additionalParams: AdditionalRequestParameters? = nil, identifier: String? = nil) {
        add(Mock(url: url, method: method, statusCode: statusCode, source: .filename(jsonFilename),
                 parameters: additionalParams, identifier: identifier))
    }

    /// Answers `url` with the file at `fileURL`.
    ///
    /// ```swift
    /// MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200, fileURL: fixture)
    /// ```
    public class func addMockResponse(for url: String, statusCode: Int, method: RequestMethod = .all, fileURL: URL,
                                      additionalParams: AdditionalRequestParameters? = nil, identifier: String? = nil) {
        add(Mock(url: url, method: method, statusCode: statusCode, source: .file(fileURL),
                 parameters: additionalParams, identifier: identifier))
    }

    /// Answers `POST`s to `url` whose GraphQL body (one operation, or a batch) names
    /// `operationName`, with a JSON file found by name.
    ///
    /// ```swift
    /// MutantInjector.addMockResponse(forGraphQL: "GetUser", url: "https://api.example.com/graphql",
    ///                                statusCode: 200, jsonFilename: "user")
    /// ```
    public class func addMockResponse(forGraphQL operationName: String, url: String, statusCode: Int, jsonFilename: String) {
        let named = BodyMatchHelpers.jsonContainsObject { $0["operationName"] as? String == operationName }
        add(Mock(url: url, method: .post, statusCode: statusCode, source: .filename(jsonFilename),
                 parameters: AdditionalRequestParameters(bodyMatches: named), identifier: nil))
    }

    /// Forgets the mocks registered with `identifier`.
    public class func removeMockResponse(identifier: String) {
        registry.withLock { $0.mocks.removeAll { $0.identifier == identifier } }
    }

    private class func add(_ mock: Mock) {
        installStub()
        registry.withLock { $0.mocks.append(mock) }
    }

    /// The one Moonmock stub that answers every registered mock, in registration order.
    private class func installStub() {
        let present = registry.withLock { $0.stub }.map { handle in moonmock.engine.runtimeRules.contains { $0.id == handle.name } } ?? false
        if present { return }
        moonmock.unmatchedPolicy = registry.withLock { $0.logMode } == .none ? .leaveUnclaimed : .passThrough
        let matcher = StubMatcher("a MutantInjector mock") { request in first(for: request) == nil ? nil : [:] }
        let handle = moonmock.stub(matcher, .dynamic { request, _ in
            guard let mock = first(for: request) else { return .text("no MutantInjector mock for \(request.url)\n", status: 501) }
            return response(mock)
        }, name: "MutantInjector")
        registry.withLock { $0.stub = handle }
    }

    /// The mock for this request's whole URL and method whose body condition holds: the one
    /// answering 200 if there is one, else the first registered.
    static func first(for request: MockRequest) -> Mock? {
        let url = normalized(request.url)
        let mocks = registry.withLock { $0.mocks }
        let matching = mocks.filter { mock in
            guard normalized(mock.url) == url, mock.method.matches(request.method) else { return false }
            guard let condition = mock.parameters?.bodyMatches else { return true }
            return condition(request.body.isEmpty ? nil : Data(request.body))
        }
        // As MutantInjector picks among a URL's statuses: its 200 when it has one, else the first.
        return matching.first { $0.statusCode == 200 } ?? matching.first
    }

    static func normalized(_ url: String) -> String { URL(string: url)?.absoluteString ?? url }

    static func response(_ mock: Mock) -> MockResponse {
        guard let file = locate(mock.source), let data = FileManager.default.contents(atPath: file.path) else {
            let error = NSError(domain: "MockURLProtocol", code: 1001,
                                userInfo: [NSLocalizedDescriptionKey: "Failed to load mock data for URL: \(mock.url) (\(mock.source.name) not found)"])
            return .fault(.error(TransportFailure(error)))
        }
        var response = MockResponse(status: mock.statusCode, headers: ["Content-Type": "application/json; charset=utf-8"], body: [UInt8](data))
        if let delay = mock.parameters?.responseDelay, delay > 0 { response.delay = .fixed(Double(delay) * 1000) }
        return response
    }
}

extension MutantInjector.Source {
    var name: String {
        switch self {
        case .filename(let name): return name + ".json"
        case .file(let url): return url.path
        }
    }
}
