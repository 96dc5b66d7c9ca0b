#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking

/// The URL cache of a session that Moonmock answers: it keeps the configuration's own cache
/// for everything, except that a request Moonmock will answer is never looked up in it.
///
/// Why: before a data task starts, URLSession asks its configuration's cache for a stored
/// response and hands it to the protocol, which for a mock is meaningless (Moonmock answers
/// every request it claims, and its responses are never stored: they are delivered with
/// `.notAllowed`). On Linux that lookup is also expensive: swift-corelibs-foundation lists
/// the process's cache directory on disk for every task (7 system calls, a directory
/// enumeration), on a background-priority thread. Skipping it halves the time of a
/// sequential request through a Moonmock session (`scripts/bench-inprocess`).
///
/// Every other call (storing, reading by request, removing, capacities) goes to the
/// configuration's cache as before, and requests Moonmock does not claim (another scheme, or
/// a request it passes through) are looked up there as usual.
///
/// Linux only: Apple's URL loading system has its own cache and is left as it is. You do not
/// make one yourself: ``Moonmock/install(into:)`` puts it into the configuration.
///
/// ```swift
/// let configuration = moonmock.makeConfiguration(.default)
/// configuration.urlCache?.memoryCapacity   // the .default cache's, read through
/// ```
final class MockedURLCache: URLCache, @unchecked Sendable {
    /// The configuration's own cache; `nil` when it had none.
    let wrapped: URLCache?
    /// The protocol class whose requests skip the lookup.
    private let claimant: MoonmockURLProtocol.Type

    init(wrapping cache: URLCache?, claimant: MoonmockURLProtocol.Type) {
        // A cache wrapping one of ours wraps what that one wraps: installing twice (or a
        // second instance into the same configuration) does not stack them.
        wrapped = (cache as? MockedURLCache)?.wrapped ?? cache
        self.claimant = claimant
        super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
    }

    /// Answers "nothing cached" for a request Moonmock claims, without a lookup. The answer
    /// still comes from another thread, as URLSession's own lookup does: URLSession then makes
    /// the protocol object there, and Moonmock runs the engine in it, in parallel with the
    /// session's serial work queue (see `MoonmockURLProtocol.init(task:cachedResponse:client:)`).
    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        if let request = dataTask.currentRequest, claimant.canInit(with: request) {
            DispatchQueue.global().async { completionHandler(nil) }
        } else if let wrapped {
            wrapped.getCachedResponse(for: dataTask, completionHandler: completionHandler)
        } else {
            completionHandler(nil)
        }
    }

    // Everything else is the wrapped cache's.

    override func cachedResponse(for request: URLRequest) -> CachedURLResponse? { wrapped?.cachedResponse(for: request) }
    override func storeCachedResponse(_ response: CachedURLResponse, for request: URLRequest) {
        wrapped?.storeCachedResponse(response, for: request)
    }
    override func storeCachedResponse(_ response: CachedURLResponse, for dataTask: URLSessionDataTask) {
        wrapped?.storeCachedResponse(response, for: dataTask)
    }
    override func removeCachedResponse(for request: URLRequest) { wrapped?.removeCachedResponse(for: request) }
    override func removeCachedResponse(for dataTask: URLSessionDataTask) { wrapped?.removeCachedResponse(for: dataTask) }
    override func removeAllCachedResponses() { wrapped?.removeAllCachedResponses() }
    override func removeCachedResponses(since date: Date) { wrapped?.removeCachedResponses(since: date) }
    override var memoryCapacity: Int {
        get { wrapped?.memoryCapacity ?? 0 }
        set { wrapped?.memoryCapacity = newValue }
    }
    override var diskCapacity: Int {
        get { wrapped?.diskCapacity ?? 0 }
        set { wrapped?.diskCapacity = newValue }
    }
    override var currentMemoryUsage: Int { wrapped?.currentMemoryUsage ?? 0 }
    override var currentDiskUsage: Int { wrapped?.currentDiskUsage ?? 0 }
}
#endif
