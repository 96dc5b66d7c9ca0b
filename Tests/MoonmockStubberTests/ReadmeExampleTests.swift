// moya-stubber's README flow — load the stubs bundle into the shared stubber, activate a stub
// for an endpoint, set the delay — with only the import changed, and the one Linux difference
// the kit documents: endpoints are given request patterns, and a session is routed to the
// stubber with install(into:) instead of Moya's endpoint and stub closures.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockStubber
import XCTest

final class ReadmeExampleTests: XCTestCase {
    func testReadmeFlow() async throws {
        let stubsBundle = Bundle(url: Bundle.module.resourceURL!.appendingPathComponent("Stubs"))!
        try MoyaStubber.shared.setStubsBundle(stubsBundle, endpoints: ["getUser": "GET /users/:id", "listUsers": "GET /users"])
        try MoyaStubber.shared.activate(stubNamed: "ok.200.json", forEndpointNamed: "getUser")
        MoyaStubber.shared.delay = 0.2

        let configuration = URLSessionConfiguration.ephemeral
        MoyaStubber.shared.install(into: configuration)
        let started = Date()
        let (data, response) = try await URLSession(configuration: configuration).data(from: URL(string: "https://api.example.com/users/1")!)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{ "id": 1, "name": "Ada" }"# + "\n")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)

        MoyaStubber.shared.deactivateStub(forEndpointNamed: "getUser")
        MoyaStubber.shared.delay = 0
    }
}
