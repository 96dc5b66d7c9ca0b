import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockTestSupport
import Testing

/// The protocol driven as Apple's URL loading system drives it: `startLoading` called on a
/// thread that runs its run loop in a mode of its own, with no session the protocol can see.
/// What Apple expects (every client call on that thread, in that mode; the session's headers,
/// timeout and cookies applied) is checked here on Linux, through the same code.
@Suite("The protocol as Apple's loader drives it")
struct LoaderThreadTests {
    static let script = #"""
    mock.get("/quick", mock.json({ ok = true }, { delay = 50 }))
    mock.get("/slow", mock.json({ ok = true }, { delay = 3000 }))
    mock.get("/dribble", mock.text("abcdefghij", { fault = "dribble", bytes_per_second = 40 }))
    mock.get("/ticks", mock.stream({ { step = 1 }, { step = 2 }, { step = 3 } }, { interval = 30 }))
    mock.get("/team", function(req) return { team = req.headers["x-team"], agent = req.headers["user-agent"] } end)
    mock.get("/login", mock.text("in", { headers = { ["Set-Cookie"] = "sid=abc; Path=/" } }))
    """#

    static let mode = RunLoop.Mode("moonmock.test.loader")

    @Test("a delayed answer, a dribble and a stream: every client call on startLoading's thread, in its run-loop mode",
          arguments: ["/quick", "/dribble", "/ticks"])
    func clientThread(path: String) async throws {
        let moonmock = try makeMoonmock(Self.script)
        let record = await load("http://x.test\(path)", moonmock.makeConfiguration())
        #expect(record.error == nil)
        #expect(record.finished)
        #expect(record.status == 200)
        #expect(!record.calls.isEmpty)
        for call in record.calls {
            #expect(call.onLoaderThread, "\(call.name) came on another thread")
            #expect(call.mode == Self.mode, "\(call.name) came in mode \(String(describing: call.mode))")
        }
        if path != "/quick" { #expect(record.calls.filter { $0.name == "didLoad" }.count >= 2, "pieces: \(record.calls.map(\.name))") }
    }

    @Test("a pass-through's answer comes back on startLoading's thread too")
    func passThrough() async throws {
        let upstream = try LoopbackServer(body: "from upstream")
        let moonmock = keep(Moonmock())
        moonmock.unmatchedPolicy = .passThrough
        let record = await load("http://127.0.0.1:\(upstream.port)/anything", moonmock.makeConfiguration())
        #expect(record.error == nil)
        #expect(String(decoding: record.body, as: UTF8.self) == "from upstream")
        #expect(record.calls.allSatisfy { $0.onLoaderThread && $0.mode == Self.mode }, "\(record.calls)")
    }

    @Test("called from a plain queue (no run loop), the calls still arrive, in order")
    func plainQueue() async throws {
        let moonmock = try makeMoonmock(Self.script)
        let record = await load("http://x.test/dribble", moonmock.makeConfiguration(), onRunLoop: false)
        #expect(record.error == nil)
        #expect(String(decoding: record.body, as: UTF8.self) == "abcdefghij")
        #expect(record.calls.first?.name == "didReceive" && record.calls.last?.name == "didFinish")
    }

    @Test("the configuration's additional headers reach the rules, set before or after installing; the request's own win")
    func additionalHeaders() async throws {
        let moonmock = try makeMoonmock(Self.script)
        let ios = URLSessionConfiguration.ephemeral
        ios.httpAdditionalHeaders = ["User-Agent": "Moonmock-Tests"]
        moonmock.install(into: ios)
        ios.httpAdditionalHeaders = ["User-Agent": "Moonmock-Tests", "X-Team": "ios"]   // after installing, before the first request
        let android = moonmock.makeConfiguration()
        android.httpAdditionalHeaders = ["X-Team": "android"]

        #expect(String(decoding: await load("http://x.test/team", ios).body, as: UTF8.self) == #"{"agent":"Moonmock-Tests","team":"ios"}"#)
        #expect(String(decoding: await load("http://x.test/team", android).body, as: UTF8.self) == #"{"team":"android"}"#)
        let own = await load("http://x.test/team", ios, headers: ["X-Team": "web"])
        #expect(String(decoding: own.body, as: UTF8.self) == #"{"agent":"Moonmock-Tests","team":"web"}"#)
    }

    @Test("the configuration's request timeout ends a longer delay in a timeout")
    func requestTimeout() async throws {
        let moonmock = try makeMoonmock(Self.script)
        let configuration = moonmock.makeConfiguration()
        configuration.timeoutIntervalForRequest = 0.2
        // Without the timeout the 3 s delay would end in the answer (the loader waits 5 s).
        let record = await load("http://x.test/slow", configuration)
        #expect((record.error as? URLError)?.code == .timedOut, "\(String(describing: record.error))")
        #expect(record.status == nil)
    }

    @Test("a response's cookies go to the configuration's storage, unless it sets no cookies")
    func cookies() async throws {
        let moonmock = try makeMoonmock(Self.script)
        let host = "cookies-\(UUID().uuidString.prefix(8).lowercased()).test"
        let url = URL(string: "http://\(host)/login")!
        let refusing = moonmock.makeConfiguration()
        refusing.httpCookieStorage = .shared
        refusing.httpShouldSetCookies = false
        _ = await load(url.absoluteString, refusing)
        #expect(HTTPCookieStorage.shared.cookies(for: url)?.isEmpty ?? true)

        let keeping = moonmock.makeConfiguration()
        keeping.httpCookieStorage = .shared
        _ = await load(url.absoluteString, keeping)
        #expect(HTTPCookieStorage.shared.cookies(for: url)?.map(\.value) == ["abc"])
        HTTPCookieStorage.shared.cookies(for: url)?.forEach(HTTPCookieStorage.shared.deleteCookie)
    }

    // MARK: the loader

    /// Makes the protocol object `configuration`'s first protocol class makes for `url`, and calls
    /// its `startLoading` as Apple's loader does: on a thread of its own running its run loop in
    /// ``mode`` (or, with `onRunLoop` false, from a plain queue); waits until it finishes or fails.
    private func load(_ url: String, _ configuration: URLSessionConfiguration, headers: [String: String] = [:],
                      onRunLoop: Bool = true) async -> RecordingClient.Record {
        var request = URLRequest(url: URL(string: url)!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let cls = configuration.protocolClasses!.first! as! URLProtocol.Type
        let client = RecordingClient()
        let loader = Unchecked(cls.init(request: request, cachedResponse: nil, client: client))
        return await withCheckedContinuation { (done: CheckedContinuation<RecordingClient.Record, Never>) in
            guard onRunLoop else {
                DispatchQueue.global().async {
                    loader.value.startLoading()
                    client.wait(5)
                    done.resume(returning: client.record)
                }
                return
            }
            let thread = Thread {
                client.loaderThread = Thread.current
                let runLoop = RunLoop.current
                // A mode with no source or timer ends at once: this one keeps it running.
                let keepAlive = Timer(timeInterval: 3600, repeats: true) { _ in }
                runLoop.add(keepAlive, forMode: Self.mode)
                runLoop.perform(inModes: [Self.mode]) { loader.value.startLoading() }
                let deadline = Date() + 5
                while !client.isDone && Date() < deadline { _ = runLoop.run(mode: Self.mode, before: Date() + 0.01) }
                keepAlive.invalidate()
                loader.value.stopLoading()
                done.resume(returning: client.record)
            }
            thread.start()
        }
    }
}

struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// A `URLProtocolClient` that writes down each call, with the thread and run-loop mode it came on.
final class RecordingClient: NSObject, URLProtocolClient, @unchecked Sendable {
    struct Call: CustomStringConvertible {
        let name: String
        let onLoaderThread: Bool
        let mode: RunLoop.Mode?
        var description: String { "\(name)@\(onLoaderThread ? "loader" : "other"):\(mode?.rawValue ?? "-")" }
    }
    struct Record {
        var calls: [Call] = []
        var status: Int?
        var body = Data()
        var error: (any Error)?
        var finished = false
    }

    private let lock = NSLock()
    private var state = Record()
    private let ended = DispatchSemaphore(value: 0)
    /// Set by the loader thread before `startLoading`.
    var loaderThread: Thread?

    var record: Record { lock.withLock { state } }
    var isDone: Bool { lock.withLock { state.finished || state.error != nil } }
    func wait(_ seconds: Double) { _ = ended.wait(timeout: .now() + seconds) }

    private func note(_ name: String, _ change: (inout Record) -> Void = { _ in }) {
        let call = Call(name: name, onLoaderThread: loaderThread.map { $0 === Thread.current } ?? false, mode: RunLoop.current.currentMode)
        lock.withLock {
            state.calls.append(call)
            change(&state)
        }
        if name == "didFinish" || name == "didFail" { ended.signal() }
    }

    func urlProtocol(_ p: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) { note("redirect") }
    func urlProtocol(_ p: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) { note("cached") }
    func urlProtocol(_ p: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        note("didReceive") { $0.status = (response as? HTTPURLResponse)?.statusCode }
    }
    func urlProtocol(_ p: URLProtocol, didLoad data: Data) { note("didLoad") { $0.body.append(data) } }
    func urlProtocolDidFinishLoading(_ p: URLProtocol) { note("didFinish") { $0.finished = true } }
    func urlProtocol(_ p: URLProtocol, didFailWithError error: any Error) { note("didFail") { $0.error = error } }
    func urlProtocol(_ p: URLProtocol, didReceive challenge: URLAuthenticationChallenge) { note("challenge") }
    func urlProtocol(_ p: URLProtocol, didCancel challenge: URLAuthenticationChallenge) { note("cancelChallenge") }
}
