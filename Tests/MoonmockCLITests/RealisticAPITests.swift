import Foundation
import MoonmockCore
import Testing

/// docs/realistic-api.md's example, run as its page says.
@Suite("examples/realistic-api.lua")
struct RealisticAPITests {
    /// The head and body `moonmock request` prints (run off the cooperative pool: see ``runCLI``).
    func body(_ method: String, _ path: String, _ extra: [String] = []) async throws -> (String, String) {
        let r = try await runCLI(["request", "examples/realistic-api.lua", method, path] + extra)
        let parts = r.stdout.components(separatedBy: "\r\n\r\n")
        return (parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test("the same user on every run, another for another id; products paged; orders from the schema")
    func asDocumented() async throws {
        let seven = try await body("GET", "/api/users/7").1
        #expect(try await body("GET", "/api/users/7").1 == seven)
        #expect(try await body("GET", "/api/users/8").1 != seven)
        let user = try JSONValue(parsing: Array(seven.utf8))
        #expect(user["email"]?.stringValue?.contains("@example.") == true && user["address"]?["city"]?.stringValue?.isEmpty == false)

        let (head, page) = try await body("GET", "/api/products?category=books&page=2&per_page=10")
        #expect(head.contains("X-Total-Count: ") && head.contains(#"rel="prev""#), "\(head)")
        let products = try JSONValue(parsing: Array(page.utf8))
        #expect(products[0]?["category"] == .string("books"))
        let (created, item) = try await body("POST", "/api/products", ["-d", #"{"name": "lamp", "price": 20}"#])
        #expect(created.hasPrefix("HTTP/1.1 201") && created.contains("Location: /api/products/51") && item.contains(#""name":"lamp""#), "\(created)")
        #expect(try await body("POST", "/api/products", ["-d", #"{"name": "", "price": 1}"#]).1.contains("/name"))

        let order = try JSONValue(parsing: Array(try await body("GET", "/api/orders/A17").1.utf8))
        #expect(order["lines"]?[0]?["sku"]?.stringValue?.range(of: #"^[A-Z]{2}-[0-9]{5}$"#, options: .regularExpression) != nil)
        #expect(try await body("GET", "/api/orders/A18").1 != (try await body("GET", "/api/orders/A17").1))
    }
}
