import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMockingjay
import MoonmockTestSupport
import Testing

/// The configuration's next protocol: answers every request with the text "next protocol".
final class NextProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 299, httpVersion: "HTTP/1.1", headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("next protocol".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

@Suite("Mockingjay kit: a request no stub matches", .serialized)
struct MockingjayUnmatchedTests {
    @Test("canInit(with:) is false when no stub matches: the configuration's next protocol class answers", .mockingjay)
    func nextProtocol() async throws {
        try await SharedSessionLock.exclusively {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.protocolClasses = [NextProtocol.self]
            MockingjayProtocol.install(into: configuration)
            #expect(configuration.protocolClasses?.count == 2)
            let session = URLSession(configuration: configuration)
            stub(uri("/stubbed"), json(["stubbed": true]))
            let mocked = try await session.reply("https://api.example.com/stubbed")
            #expect(mocked.status == 200 && mocked.text == #"{"stubbed":true}"#)
            let other = try await session.reply("https://api.example.com/other")
            #expect(other.status == 299 && other.text == "next protocol")
            let cls = try #require(configuration.protocolClasses?.first as? URLProtocol.Type)
            #expect(!cls.canInit(with: URLRequest(url: URL(string: "https://api.example.com/other")!)))
            #expect(cls.canInit(with: URLRequest(url: URL(string: "https://api.example.com/stubbed")!)))
        }
    }

    @Test("MockingjayProtocol.canInit(with:) and addStub(matcher:) as Mockingjay's own tests call them", .mockingjay)
    func seedSpelling() async {
        await SharedSessionLock.exclusively {
            let request = URLRequest(url: URL(string: "https://kylefuller.co.uk/")!)
            #expect(!MockingjayProtocol.canInit(with: request))
            MockingjayProtocol.addStub(matcher: { _ in true }) { _ in
                Response.failure(NSError(domain: "MockingjayTests", code: 0, userInfo: nil))
            }
            #expect(MockingjayProtocol.canInit(with: request))
            MockingjayProtocol.removeAllStubs()
            #expect(!MockingjayProtocol.canInit(with: request))
        }
    }
}
