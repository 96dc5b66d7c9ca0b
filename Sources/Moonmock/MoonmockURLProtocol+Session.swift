#if canImport(FoundationNetworking)
@_spi(Reflection) import Swift   // _forEachField: where corelibs' URLSessionTask keeps its session
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

/// What a task's session says about the requests it sends: read once per session.
///
/// URLSession applies these itself to a request it sends over the network, and leaves a
/// `URLProtocol` to do so: the in-process door uses them to see a request as a server would.
/// They come from the task's session where the task shows it (``of(_:)``, Linux), else from
/// the configuration the protocol class was installed into (``Moonmock/install(into:)``).
///
/// ```swift
/// let facts = SessionFacts.of(task)
/// facts?.additionalHeaders?["Authorization"]   // the session's, for a request that has none
/// ```
struct SessionFacts: Sendable {
    /// `httpAdditionalHeaders`, as strings.
    let additionalHeaders: [String: String]?
    /// `timeoutIntervalForRequest`.
    let timeoutIntervalForRequest: TimeInterval
    /// The cookie storage responses' cookies go to: `nil` when the session sets no cookies
    /// (`httpShouldSetCookies` off, an accept policy of `.never`, or no storage).
    let cookieStorage: HTTPCookieStorage?

    init(_ configuration: URLSessionConfiguration) {
        additionalHeaders = configuration.httpAdditionalHeaders.map { headers in
            Dictionary(headers.compactMap { f in (f.key as? String).map { ($0, "\(f.value)") } }, uniquingKeysWith: { a, _ in a })
        }
        timeoutIntervalForRequest = configuration.timeoutIntervalForRequest
        cookieStorage = configuration.httpShouldSetCookies && configuration.httpCookieAcceptPolicy != .never
            ? configuration.httpCookieStorage : nil
    }

    /// Keeps `response`'s cookies in the session's storage, as URLSession keeps those of a
    /// response it receives over the network (a `URLProtocol`'s it leaves alone): the session's
    /// next requests to the cookies' domain and path then carry them, as against a server.
    ///
    /// ```lua
    /// mock.post("/login", mock.json({ ok = true }, { headers = { ["Set-Cookie"] = "sid=abc; Path=/" } }))
    /// mock.get("/me", function(req) return { sid = req.headers["cookie"] } end)   -- "sid=abc"
    /// ```
    func storeCookies(of response: MockResponse, for url: URL, mainDocumentURL: URL?) {
        guard let cookieStorage else { return }
        // One field at a time: a date in `Expires` has a comma, so joined fields would not split back.
        let cookies = response.headers.values("Set-Cookie").flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: url) }
        if !cookies.isEmpty { cookieStorage.setCookies(cookies, for: url, mainDocumentURL: mainDocumentURL) }
    }

    /// The facts of `task`'s session (swift-corelibs-foundation keeps it in the task's
    /// `session`, not public: found by reflection); `nil` if there is none to be found.
    static func of(_ task: URLSessionTask?) -> SessionFacts? {
        #if canImport(FoundationNetworking)
        guard let task, let session = session(of: task) else { return nil }
        let key = ObjectIdentifier(session)
        if let known = cache.withLock({ $0[key] }), known.session.value === session { return known.facts }
        // A session's configuration is fixed when the session is made, and reading it builds a
        // whole configuration object: read once per session, then kept.
        let facts = SessionFacts(session.configuration)
        cache.withLock { entries in
            if entries.count >= 64 { entries = entries.filter { $0.value.session.value != nil } }
            entries[key] = (WeakSession(session), facts)
        }
        return facts
        #else
        // Apple's URLSessionTask keeps its session in Objective-C, out of reach: the facts come
        // from the configuration the protocol was installed into.
        return nil
        #endif
    }

    /// `URLSession.shared`'s, for the class ``Moonmock/installGlobally()`` answers through when
    /// the task does not show its session (read once: the shared session's configuration is fixed).
    static let sharedSession = SessionFacts(URLSession.shared.configuration)

    #if canImport(FoundationNetworking)
    /// `task`'s session. A `Mirror` finds it by name, boxing every child before it (over ten
    /// microseconds a request); the runtime's field records give its place in the object
    /// once, and it is read from there, after one check that both ways find the same session.
    private static func session(of task: URLSessionTask) -> URLSession? {
        if let offset = sessionOffset, sessionOffsetChecked.load(ordering: .relaxed) >= 0 {
            let word = Unmanaged.passUnretained(task).toOpaque().load(fromByteOffset: offset, as: UnsafeRawPointer?.self)
            let fast = word.map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() } as? URLSession
            if sessionOffsetChecked.load(ordering: .relaxed) == 1 { return fast }
            let slow = MoonmockURLProtocol.reflectedChild(task, "session") as? URLSession
            sessionOffsetChecked.store(fast === slow ? 1 : -1, ordering: .relaxed)
            return slow
        }
        return MoonmockURLProtocol.reflectedChild(task, "session") as? URLSession
    }

    /// Where `URLSessionTask` keeps its `session` (a reference, first in its storage), from the
    /// runtime's field records; `nil` if there is no such field. (Options bit 0 is
    /// `_EachFieldOptions.classType`, a `static var` Swift 6 will not read from here.)
    private static let sessionOffset: Int? = {
        var offset: Int?
        _forEachField(of: URLSessionTask.self, options: _EachFieldOptions(rawValue: 1 << 0)) { name, fieldOffset, _, _ in
            guard strcmp(name, "session") == 0 else { return true }
            offset = fieldOffset
            return false
        }
        return offset
    }()

    /// 0 until the first read checks the place against a `Mirror`, then 1 (agreed) or -1 (use the `Mirror`).
    private static let sessionOffsetChecked = AtomicInt(0)

    private static let cache = Locked<[ObjectIdentifier: (session: WeakSession, facts: SessionFacts)]>([:])
    #endif
}

#if canImport(FoundationNetworking)
/// A session held without keeping it alive: its identifier may be reused once it is gone.
private struct WeakSession: @unchecked Sendable {
    weak var value: URLSession?
    init(_ value: URLSession) { self.value = value }
}
#endif
