import Testing
@testable import MoonmockCore

/// A server builds each request in the storage of the one before when nothing holds that any
/// more; a request anyone kept must never change under them.
@Suite("Recycled requests")
struct MockRequestRecyclingTests {
    private static func make(_ spare: inout MockRequest?, target: String, lines: String, body: String) -> MockRequest {
        let l = Array(lines.utf8), b = Array(body.utf8)
        return l.withUnsafeBytes { l in
            b.withUnsafeBytes { b in
                MockRequest.recycling(&spare, method: "POST", scheme: "http", host: "api.test", port: 8080,
                                      target: target, headerLines: l, body: b)
            }
        }
    }

    @Test("a recycled request has only its own fields, and nothing remembered from the last")
    func ownFields() {
        var spare: MockRequest?
        var first = Self.make(&spare, target: "/graphql?x=1", lines: "Host: api.test:8080\r\nX-A: 1\r\n",
                              body: #"{"operationName":"GetUser","variables":{"id":"7"}}"#)
        first.id = 41
        // Fill every memo the first request has, then hand it back.
        #expect(first.graphQLOperationName == "GetUser" && first.json?["variables"]?["id"] == .string("7"))
        #expect(first.query("x") == "1" && first.pathSegments == ["graphql"])
        spare = first
        first = Self.make(&spare, target: "/users/9", lines: "Host: api.test:8080\r\n", body: "[1]")
        #expect(spare == nil)
        #expect(first.path == "/users/9" && first.rawQuery == nil && first.query("x") == nil && first.id == 0)
        #expect(first.pathSegments == ["users", "9"])
        #expect(first.headers["x-a"] == nil && first.headers["host"] == "api.test:8080")
        #expect(first.body == Array("[1]".utf8) && first.json == .array([.integer(1)]) && first.graphQLOperationName == nil)
        #expect(first.method == "POST" && first.host == "api.test" && first.port == 8080)
        // Targets one after another: the same again, another, the first again.
        for target in ["/users/9", "/users/9", "/x?y=2#f", "/graphql?x=1"] {
            spare = first
            first = Self.make(&spare, target: target, lines: "", body: "")
            let expected: [String: (String, String?)] = ["/users/9": ("/users/9", nil), "/x?y=2#f": ("/x", "y=2"),
                                                        "/graphql?x=1": ("/graphql", "x=1")]
            #expect(first.path == expected[target]?.0 && first.rawQuery == expected[target]?.1, "\(target)")
        }
    }

    @Test("a request someone still holds is left alone: the next one gets storage of its own")
    func heldRequestKept() {
        var spare: MockRequest?
        let kept = Self.make(&spare, target: "/a?q=1", lines: "X-Id: kept\r\n", body: "kept body")
        #expect(kept.json == nil)   // a memo filled before the next request
        spare = kept
        let next = Self.make(&spare, target: "/b", lines: "X-Id: next\r\n", body: #"{"n":2}"#)
        #expect(kept.path == "/a" && kept.rawQuery == "q=1" && kept.headers["x-id"] == "kept")
        #expect(kept.bodyText == "kept body" && kept.json == nil)
        #expect(next.path == "/b" && next.headers["x-id"] == "next" && next.json?["n"] == .integer(2))
    }

    @Test("the header list of a recycled request is a list of its own")
    func headerListsApart() {
        var spare: MockRequest?
        let first = Self.make(&spare, target: "/", lines: "X-Id: 1\r\n", body: "")
        let headers = first.headers   // a copy of the list shares its lines
        spare = consume first
        let second = Self.make(&spare, target: "/", lines: "X-Id: 2\r\nX-More: yes\r\n", body: "")
        #expect(headers["x-id"] == "1" && headers["x-more"] == nil)
        #expect(second.headers["x-id"] == "2" && second.headers["x-more"] == "yes")
    }
}
