import Foundation
import MoonmockCore

extension Moonmock {
    /// Serves a Mock-Bundle folder (`bundle.json` and its files) from Swift, without a script:
    /// any folder, an absolute path included; `nil` serves none. The bundle answers as a Swift
    /// stub (before the script's rules); ``removeAllStubs()`` and ``reset()`` remove it with
    /// the other stubs.
    ///
    /// ```swift
    /// try moonmock.setMockBundle(URL(fileURLWithPath: "/path/to/Tests/bundles/httpbin"))
    /// moonmock.bundleHandlesAllRequests = true   // 501 for what the bundle lacks
    /// try moonmock.setMockBundle(nil)            // no bundle
    /// ```
    public func setMockBundle(_ directory: URL?) throws {
        let bundle = try directory.map { try MockBundle(directory: $0) }
        let needsRule = withSettings { s -> Bool in
            s.swiftBundle.bundle = bundle
            return s.swiftBundle.rule.map { rule in !engine.runtimeRules.contains { $0 === rule.rule } } ?? true
        }
        if needsRule { addBundleRule() }
    }

    /// The folder ``setMockBundle(_:)`` serves, if any.
    public var mockBundleDirectory: URL? { withSettings { $0.swiftBundle.bundle?.directory } }

    /// While `true`, a request the Swift bundle has no entry for is answered `501 Not
    /// Implemented` instead of going to the next rule (with no bundle set, nothing is answered,
    /// as with MockingBird). Switchable at any time.
    public var bundleHandlesAllRequests: Bool {
        get { withSettings { $0.swiftBundle.handlesAll } }
        set {
            let needsRule = withSettings { s -> Bool in
                s.swiftBundle.handlesAll = newValue
                return s.swiftBundle.rule.map { rule in !engine.runtimeRules.contains { $0 === rule.rule } } ?? true
            }
            if needsRule && newValue { addBundleRule() }
        }
    }

    /// The stub that answers from the Swift bundle, reading the choice at each request.
    private func addBundleRule() {
        let state: @Sendable () -> (MockBundle?, Bool) = { [weak self] in
            self?.withSettings { ($0.swiftBundle.bundle, $0.swiftBundle.handlesAll) } ?? (nil, false)
        }
        let matcher = StubMatcher("a Mock-Bundle entry") { request in
            let (bundle, all) = state()
            // Handling all requests without a bundle answers each 501, as MockingBird does.
            guard let bundle else { return all ? [:] : nil }
            return all || bundle.entry(for: request) != nil ? [:] : nil
        }
        let handle = stub(matcher, .dynamic { request, _ in
            let (bundle, _) = state()
            if let entry = bundle?.entry(for: request) { return entry.response }
            return .text("no entry in the Mock-Bundle \(bundle?.directory.path ?? "(none)") for \(request.method) \(request.url); add one to its bundle.json\n", status: 501)
        }, name: "Mock-Bundle (Swift)")
        withSettings { $0.swiftBundle.rule = handle }
    }
}

/// The bundle set from Swift and the stub answering from it.
struct SwiftBundle {
    var bundle: MockBundle?
    var handlesAll = false
    var rule: StubHandle?
}
