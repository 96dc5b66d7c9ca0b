import Testing
@testable import MoonmockCore

@Suite("Header lists")
struct HTTPHeadersTests {
    /// Lines as a server hands them over: CRLF and bare LF ends, spaces and tabs around values,
    /// a colon inside a value, a repeated name, an empty value.
    static let lines = Array("Host: api.test:8080\r\nX-Tenant:\tacme \r\nAccept: */*\nx-tenant: other\r\nX-Empty:\r\n".utf8)

    @Test("a server's header lines read like the fields they hold")
    func lines() {
        let h = HTTPHeaders(validatedLines: Self.lines)
        #expect(h["host"] == "api.test:8080")
        #expect(h["X-TENANT"] == "acme")   // the first of a repeated name
        #expect(h.values("x-tenant") == ["acme", "other"])
        #expect(h["x-empty"] == "")
        #expect(h["missing"] == nil)
        #expect(!h.isEmpty && HTTPHeaders(validatedLines: []).isEmpty)
        let expected = [("Host", "api.test:8080"), ("X-Tenant", "acme"), ("Accept", "*/*"), ("x-tenant", "other"), ("X-Empty", "")]
        #expect(h.fields.map(\.name) == expected.map(\.0))
        #expect(h.fields.map(\.value) == expected.map(\.1))
        #expect(Array(h).map(\.value) == expected.map(\.1))
        #expect(h == HTTPHeaders(expected))
        #expect(h != HTTPHeaders(Array(expected.dropLast())))
    }

    @Test("changing a list read from lines keeps every other field, in order")
    func changes() {
        var h = HTTPHeaders(validatedLines: Self.lines)
        h["x-tenant"] = "new"
        #expect(h.fields.map(\.name) == ["Host", "Accept", "X-Empty", "x-tenant"])
        #expect(h.values("x-tenant") == ["new"])
        var added = HTTPHeaders(validatedLines: Self.lines)
        added.add("X-More", "1")
        #expect(added.fields.count == 6 && added["x-more"] == "1" && added["host"] == "api.test:8080")
        var defaulted = HTTPHeaders(validatedLines: Self.lines)
        defaulted.setDefault("Accept", "text/html")
        defaulted.setDefault("Origin", "o")
        #expect(defaulted["accept"] == "*/*" && defaulted["origin"] == "o")
    }
}
