import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import Testing

// The README's "Use it in Swift tests" example, verbatim apart from the script path.
private struct User: Decodable { let id: Int; let name: String }

private let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples")

@Test func showsTheUser() async throws {
    // rules from a script next to the tests (or: try moonmock.load(lua: "..."))
    let moonmock = try Moonmock(script: examples.appendingPathComponent("mocks.lua"))
    // a one-off Swift stub, tried before the script's rules
    moonmock.stub(.http(.get, uri: "/users/{id}/avatar"), .http(status: 404))

    let session = URLSession(configuration: moonmock.makeConfiguration())
    let (data, _) = try await session.data(from: URL(string: "https://api.example.com/users/7")!)
    let user = try JSONDecoder().decode(User.self, from: data)

    #expect(user.name == "User 7")
    try moonmock.verify(.get, "/users/:id", times: 1)
    try moonmock.verifyNoUnmatchedRequests()
}
