// MockingBird's README test set-up (its Alamofire example, with URLSession in place of
// Alamofire), with only the import changed. One line differs by platform, not by library:
// SwiftPM puts a test target's resources in `Bundle.module`, where Xcode's folder reference
// puts them in `Bundle(for:)`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMockingBird
import XCTest

class mockingbirdTests: XCTestCase {
    var session: URLSession! = nil

    override func setUp() {
        super.setUp()

        let configuration = URLSessionConfiguration.default
        MockingBird.registerInConfig(configuration)
        self.session = URLSession(configuration: configuration)

        let bundle = Bundle.module.resourcePath! + "/bundles/httpbin"
        do {
            try MockingBird.setMockBundle(bundle)
        } catch {
            XCTFail("Could not reset mock bundle")
        }
    }

    func testMock() {
        let expectation = self.expectation(description: "testMock")
        self.session.dataTask(with: URL(string: "http://httpbin.org/ip")!) { data, response, _ in
            let json = (try? JSONSerialization.jsonObject(with: data ?? Data())) as? [String: Any]
            XCTAssertEqual(json?["origin"] as? String, "127.0.0.1")
            XCTAssertEqual((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type"), "application/json")
            expectation.fulfill()
        }.resume()
        self.wait(for: [expectation], timeout: 2.0)
    }
}
