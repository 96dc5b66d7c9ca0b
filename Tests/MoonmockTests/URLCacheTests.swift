#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Moonmock
import MoonmockCore
import Testing

/// A cache that counts the lookups URLSession makes in it before a task starts.
final class CountingCache: URLCache, @unchecked Sendable {
    let lookups = AtomicInt(0)

    init() { super.init(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil) }

    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        lookups.add(1, ordering: .relaxed)
        super.getCachedResponse(for: dataTask, completionHandler: completionHandler)
    }
}

@Suite("The URL cache of a Moonmock session")
struct URLCacheTests {
    @Test("a request Moonmock answers is not looked up in the configuration's cache, which keeps everything else")
    func skipsLookupForMockedRequests() async throws {
        let moonmock = try makeMoonmock()
        let cache = CountingCache()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = cache
        moonmock.install(into: configuration)
        moonmock.install(into: configuration)   // the second install does not wrap the first
        let session = URLSession(configuration: configuration)

        for id in 1...3 {
            let (body, response) = try await session.fetch("http://api.example.com/users/\(id)")
            #expect(response.statusCode == 200)
            #expect(body == #"{"id":\#(id),"name":"User \#(id)"}"#)
        }
        #expect(cache.lookups.load(ordering: .relaxed) == 0)

        // Everything else reaches the configuration's own cache.
        let installed = try #require(configuration.urlCache)
        #expect(installed.memoryCapacity == 1 << 20)
        installed.memoryCapacity = 2 << 20
        #expect(cache.memoryCapacity == 2 << 20)
        let url = URL(string: "http://cached.test/page")!
        let stored = CachedURLResponse(response: HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!,
                                       data: Data("kept".utf8))
        installed.storeCachedResponse(stored, for: URLRequest(url: url))
        #expect(cache.cachedResponse(for: URLRequest(url: url)).map { String(decoding: $0.data, as: UTF8.self) } == "kept")
        #expect(installed.cachedResponse(for: URLRequest(url: url))?.data == Data("kept".utf8))
        installed.removeAllCachedResponses()
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)

        // A request Moonmock does not claim (another scheme) is looked up there as before.
        let (data, _) = try await session.data(from: URL(string: "data:text/plain,hello")!)
        #expect(String(decoding: data, as: UTF8.self) == "hello")
        #expect(cache.lookups.load(ordering: .relaxed) == 1)
    }

    @Test("a configuration without a cache gets none back for other requests")
    func noCacheStaysEmpty() async throws {
        let moonmock = try makeMoonmock()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        moonmock.install(into: configuration)
        let url = URL(string: "http://cached.test/page")!
        let installed = try #require(configuration.urlCache)
        installed.storeCachedResponse(CachedURLResponse(response: URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil),
                                                        data: Data("x".utf8)), for: URLRequest(url: url))
        #expect(installed.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(installed.memoryCapacity == 0)
        let (body, _) = try await URLSession(configuration: configuration).fetch("http://api.example.com/users/4")
        #expect(body == #"{"id":4,"name":"User 4"}"#)
    }
}
#endif
