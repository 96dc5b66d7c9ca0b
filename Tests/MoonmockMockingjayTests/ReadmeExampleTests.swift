// Mockingjay's README examples, with only the import changed (`import Mockingjay` →
// `import MoonmockMockingjay`), in an XCTestCase as its README has them.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMockingjay
import XCTest

final class ReadmeExampleTests: XCTestCase {
    func testReadmeExamples() throws {
        // Stubs of another test were removed when it ended.
        XCTAssertTrue(MockingjayProtocol.moonmock.engine.runtimeRules.isEmpty)

        let body = [ "user": "Kyle" ]
        stub(uri("/{user}/{repository}"), json(body))

        let description = [ "description": "Kyle" ]
        stub(http(.put, uri: "/kylef/Mockingjay"), json(description))

        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorNotConnectedToInternet)
        stub(uri("/offline"), failure(error))

        stub(uri("https://github.com/kylef/WebLinking.swift"), http(status: 404))

        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("fixture.json")
        let data = try Data(contentsOf: url)
        stub(uri("/fixture"), jsonData(data))

        XCTAssertEqual(try fetch("https://api.example.com/kylef/Mockingjay").body, #"{"user":"Kyle"}"#)
        var put = URLRequest(url: URL(string: "https://api.example.com/kylef/Mockingjay")!)
        put.httpMethod = "PUT"
        XCTAssertEqual(try fetch(put).body, #"{"description":"Kyle"}"#)
        XCTAssertEqual(try fetch("https://github.com/kylef/WebLinking.swift").status, 404)
        XCTAssertEqual(try fetch("https://api.example.com/fixture").body, String(decoding: data, as: UTF8.self))
        XCTAssertThrowsError(try fetch("https://api.example.com/offline")) { error in
            XCTAssertEqual((error as NSError).code, NSURLErrorNotConnectedToInternet)
        }
    }

    func testStubsOfOneTestAreGoneInTheNext() throws {
        XCTAssertTrue(MockingjayProtocol.moonmock.engine.runtimeRules.isEmpty)
        stub(everything, http(418))
        XCTAssertEqual(try fetch("https://api.example.com/anything").status, 418)
    }

    /// A GET (or `request`) through `URLSession.shared` with a completion handler, waited for.
    private func fetch(_ url: String) throws -> (status: Int, body: String) { try fetch(URLRequest(url: URL(string: url)!)) }

    private func fetch(_ request: URLRequest) throws -> (status: Int, body: String) {
        let done = expectation(description: "response")
        nonisolated(unsafe) var result: Result<(Int, String), Error> = .failure(URLError(.unknown))
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error { result = .failure(error) } else {
                result = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data ?? Data(), as: UTF8.self)))
            }
            done.fulfill()
        }.resume()
        wait(for: [done], timeout: 10)
        return try result.get()
    }
}
