import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMutantInjector
import MoonmockTestSupport
import Testing

/// MutantInjector's semantics through real sessions: whole-URL keys, first registered wins,
/// methods, delays, body conditions, logging, teardown.
@Suite("MutantInjector kit", .serialized)
struct MutantInjectorBehaviourTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Runs `body` with the interceptor set up on `URLSession.shared`, then tears it down.
    static func intercepting(_ body: @Sendable () async throws -> Void) async throws {
        try await SharedSessionLock.exclusively {
            MutantInjector.setupGlobalInterceptor()
            defer {
                MutantInjector.tearDownGlobalInterceptor()
                MutantInjector.setRequestLogMode(.none)
            }
            try await body()
        }
    }

    static func get(_ url: String, method: String = "GET", body: String? = nil, session: URLSession = .shared) async throws -> (Int, String) {
        let reply = try await session.reply(url, method: method, body: body)
        return (reply.status, reply.text)
    }

    @Test("files from the test bundle's resources; the whole URL with its query is the key")
    func wholeURL() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.addMockResponse(for: "https://api.example.com/users?page=2", statusCode: 200, jsonFilename: "users_success")
            let (status, body) = try await Self.get("https://api.example.com/users?page=2")
            #expect(status == 200)
            #expect(body.contains("John Doe"))
            let upstream = try LoopbackServer(body: "real network")
            MutantInjector.addMockResponse(for: "http://127.0.0.1:\(upstream.port)/users?page=2", statusCode: 200, jsonFilename: "users_success")
            // Another query, or none, is another URL: not mocked, so the network answers.
            #expect(try await Self.get("http://127.0.0.1:\(upstream.port)/users?page=3").1 == "real network")
            #expect(try await Self.get("http://127.0.0.1:\(upstream.port)/users").1 == "real network")
        }
    }

    @Test("the first mock registered for a URL and method answers; methods filter")
    func firstRegistered() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200, jsonFilename: "users_success")
            MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 404, jsonFilename: "not_found_error")
            let upstream = try LoopbackServer(body: "real network")
            let items = "http://127.0.0.1:\(upstream.port)/items"
            MutantInjector.addMockResponse(for: items, statusCode: 201, method: .post, fileURL: Self.fixtures.appendingPathComponent("users_success.json"))
            #expect(try await Self.get("https://api.example.com/users").0 == 200)
            #expect(try await Self.get(items, method: "POST", body: "{}").0 == 201)
            #expect(try await Self.get(items).1 == "real network")   // a GET: not mocked
        }
    }

    @Test("a URL with a 404 and a 200 mock answers the 200, whichever came first, as MutantInjector picks its statuses")
    func twoHundredWins() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.addMockResponse(for: "https://api.example.com/me", statusCode: 404, jsonFilename: "not_found_error")
            #expect(try await Self.get("https://api.example.com/me").0 == 404)
            MutantInjector.addMockResponse(for: "https://api.example.com/me", statusCode: 200, jsonFilename: "users_success")
            let (status, body) = try await Self.get("https://api.example.com/me")
            #expect(status == 200 && body.contains("John Doe"))
        }
    }

    @Test("responseDelay and bodyMatches with jsonContainsObject (a GraphQL operation)")
    func additionalParameters() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.mockFilesDirectory = Self.fixtures
            defer { MutantInjector.mockFilesDirectory = nil }
            let getUser = AdditionalRequestParameters(responseDelay: 0.3, bodyMatches: BodyMatchHelpers.jsonContainsObject { $0["operationName"] as? String == "GetUser" })
            MutantInjector.addMockResponse(for: "https://api.example.com/graphql", statusCode: 200, method: .post, jsonFilename: "graphql_user",
                                           additionalParams: getUser, identifier: "getUser")
            MutantInjector.addMockResponse(for: "https://api.example.com/graphql", statusCode: 400, method: .post, jsonFilename: "not_found_error")
            let started = Date()
            let (status, body) = try await Self.get("https://api.example.com/graphql", method: "POST", body: #"{"operationName":"GetUser"}"#)
            #expect(status == 200 && body.contains("Ada"))
            #expect(Date().timeIntervalSince(started) >= 0.3)
            #expect(try await Self.get("https://api.example.com/graphql", method: "POST", body: #"[{"operationName":"GetUser"}]"#).0 == 200)
            #expect(try await Self.get("https://api.example.com/graphql", method: "POST", body: #"{"operationName":"Other"}"#).0 == 400)
            MutantInjector.addMockResponse(forGraphQL: "Other", url: "https://api.example.com/graphql", statusCode: 202, jsonFilename: "graphql_user")
            MutantInjector.removeMockResponse(identifier: "getUser")
            #expect(try await Self.get("https://api.example.com/graphql", method: "POST", body: #"{"operationName":"Other"}"#).0 == 400)   // registered first
            let upstream = try LoopbackServer(body: "real network")
            let graphQL = "http://127.0.0.1:\(upstream.port)/graphql"
            MutantInjector.addMockResponse(forGraphQL: "GetUser", url: graphQL, statusCode: 200, jsonFilename: "graphql_user")
            #expect(try await Self.get(graphQL, method: "POST", body: #"{"operationName":"GetUser"}"#).1.contains("Ada"))
            #expect(try await Self.get(graphQL, method: "POST", body: #"{"operationName":"Other"}"#).1 == "real network")
            #expect(try await Self.get("https://api.example.com/graphql", method: "POST", body: #"{"operationName":"GetUser"}"#).0 == 400)
        }
    }

    @Test("a missing JSON file fails the request naming it")
    func missingFile() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.addMockResponse(for: "https://api.example.com/none", statusCode: 200, jsonFilename: "no_such_file")
            do {
                _ = try await Self.get("https://api.example.com/none")
                Issue.record("expected an error")
            } catch {
                #expect((error as NSError).code == 1001)
                #expect("\(error)".contains("no_such_file.json"))
            }
        }
    }

    @Test("log modes: compact without headers, verbose with; the filter compares whole URLs")
    func logging() async throws {
        try await Self.intercepting { () async throws in
            let lines = LockedLines()
            MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200, jsonFilename: "users_success")
            MutantInjector.setRequestLogMode(.compact) { lines.append($0) }
            _ = try await Self.get("https://api.example.com/users", method: "GET")
            var request = URLRequest(url: URL(string: "https://api.example.com/users")!)
            request.setValue("yes", forHTTPHeaderField: "X-Trace")
            MutantInjector.setRequestLogMode(.verbose, for: ["https://api.example.com/users"]) { lines.append($0) }
            _ = try await URLSession.shared.data(for: request)
            MutantInjector.addMockResponse(for: "https://api.example.com/users/extra", statusCode: 200, jsonFilename: "users_success")
            _ = try await Self.get("https://api.example.com/users/extra")   // contains the logged URL, is not it
            let logged = lines.all
            #expect(logged.count == 2)
            #expect(logged.first?.headers == nil && logged.first?.url == "https://api.example.com/users")
            #expect(logged.last?.headers?["X-Trace"] == "yes")
        }
    }

    @Test("sessions from .default and .ephemeral with install(into:), completion handlers; teardown forgets the mocks")
    func sessionsAndTeardown() async throws {
        try await Self.intercepting { () async throws in
            MutantInjector.addMockResponse(for: "https://api.example.com/users", statusCode: 200, jsonFilename: "users_success")
            for configuration in [URLSessionConfiguration.default, .ephemeral] {
                MutantInjector.install(into: configuration)
                let session = URLSession(configuration: configuration)
                let status: Int = await withCheckedContinuation { done in
                    session.dataTask(with: URL(string: "https://api.example.com/users")!) { _, response, _ in
                        done.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
                    }.resume()
                }
                #expect(status == 200)
            }
            MutantInjector.tearDownGlobalInterceptor()
            MutantInjector.setupGlobalInterceptor()
            let upstream = try LoopbackServer(body: "real network")
            MutantInjector.addMockResponse(for: "http://127.0.0.1:\(upstream.port)/a", statusCode: 200, jsonFilename: "users_success")
            MutantInjector.clearAllMockResponses()
            #expect(try await Self.get("http://127.0.0.1:\(upstream.port)/a").1 == "real network")
        }
    }
}

final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [RequestLogInfo] = []
    func append(_ line: RequestLogInfo) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [RequestLogInfo] { lock.lock(); defer { lock.unlock() }; return lines }
}
