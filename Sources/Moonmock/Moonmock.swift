import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockScript

/// An in-process Moonmock: an ``Engine`` with rules from `mocks.lua` and Swift stubs, reached
/// through a `URLProtocol` by the `URLSession`s you install it into. No socket, no port.
///
/// Each instance is isolated: a session configured for one instance is answered by that
/// instance only, so parallel tests can each have their own.
///
/// ```swift
/// let moonmock = try Moonmock(script: URL(fileURLWithPath: "mocks.lua"))
/// let session = URLSession(configuration: moonmock.makeConfiguration())
/// let (data, response) = try await session.data(from: URL(string: "https://api.example.com/users/7")!)
/// ```
public final class Moonmock: @unchecked Sendable {
    /// The engine both transports share: rules, journal, state.
    public let engine: Engine
    /// The `URLProtocol` class that routes to this instance (for `protocolClasses`).
    public var protocolClass: AnyClass { taggedClass }
    /// The same class, typed.
    private let taggedClass: MoonmockURLProtocol.Type

    private let settings = Locked(Settings())
    /// Runs `body` on the settings under their lock (for the extensions in other files).
    func withSettings<T>(_ body: (inout Settings) throws -> T) rethrows -> T { try settings.withLock { try body(&$0) } }
    struct Settings {
        var unmatched: UnmatchedPolicy = .fail
        var logging: RequestLogging = .none
        var fixturesDirectory: URL?
        var scriptOptions = ScriptOptions()
        var generation: ScriptGeneration?
        var host: ScriptHost?
        /// Where ``Moonmock/addRule(json:)`` compiles rules (made on first use).
        var runtimeRules: RuntimeRules?
        /// ``Moonmock/setMockBundle(_:)``'s bundle.
        var swiftBundle = SwiftBundle()
    }

    /// Creates an instance with no rules.
    ///
    /// - Parameters:
    ///   - environment: where `now`, `uuid` and random numbers come from (pin it in tests).
    ///   - journalCapacity: how many requests the journal keeps.
    public init(environment: MockEnvironment = .system, journalCapacity: Int = 1000) {
        engine = Engine(environment: environment, journalCapacity: journalCapacity)
        engine.outbox.client = SessionOutbound()
        InstanceRegistry.registerGlobalClassOnce()
        let cls = InstanceRegistry.makeProtocolClass()
        taggedClass = cls
        InstanceRegistry.register(self, for: cls)
    }

    /// Creates an instance serving a `mocks.lua` file (or a folder holding `mocks.lua`).
    ///
    /// ```swift
    /// let moonmock = try Moonmock(script: Bundle.module.url(forResource: "mocks", withExtension: "lua")!)
    /// ```
    public convenience init(script: URL, options: ScriptOptions = ScriptOptions(), environment: MockEnvironment = .system) throws {
        self.init(environment: environment)
        try load(script: script, options: options)
    }

    /// Creates an instance whose fake data, `mock.schema` values, chaos and `math.random` are
    /// seeded: the same requests get the same bodies and failures here and on a server started
    /// with `--seed` (the clock and `mock.uuid` stay real).
    ///
    /// ```swift
    /// let moonmock = try Moonmock(script: url, seed: 42)
    /// ```
    public convenience init(script: URL, options: ScriptOptions = ScriptOptions(), seed: UInt64) throws {
        self.init(environment: MockEnvironment.system.seeded(seed))
        try load(script: script, options: options)
    }

    /// An instance with no rules, seeded as ``init(script:options:seed:)``.
    public convenience init(seed: UInt64, journalCapacity: Int = 1000) {
        self.init(environment: MockEnvironment.system.seeded(seed), journalCapacity: journalCapacity)
    }

    deinit {
        InstanceRegistry.unregister(protocolClass)
        InstanceRegistry.unregisterConfigurations(of: protocolClass)
        if InstanceRegistry.global === self { InstanceRegistry.global = nil }
    }

    /// What happens to requests no rule answers. Default ``UnmatchedPolicy/fail``.
    public var unmatchedPolicy: UnmatchedPolicy {
        get { settings.withLock { $0.unmatched } }
        set { settings.withLock { $0.unmatched = newValue } }
    }

    /// Request logging. Default ``RequestLogging/none``.
    public var logging: RequestLogging {
        get { settings.withLock { $0.logging } }
        set { settings.withLock { $0.logging = newValue } }
    }

    /// Where ``mock(url:method:status:jsonFile:delay:body:)`` looks for file names; defaults to the
    /// loaded script's folder, else the current directory.
    public var fixturesDirectory: URL {
        get {
            settings.withLock { s in
                s.fixturesDirectory ?? s.generation?.baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            }
        }
        set { settings.withLock { $0.fixturesDirectory = newValue } }
    }

    /// The loaded script generation, if any (the newest one while watching).
    public var script: ScriptGeneration? { settings.withLock { $0.host?.current ?? $0.generation } }

    // MARK: loading

    /// Loads a `mocks.lua` file, or the `mocks.lua` inside a folder. Replaces earlier script rules;
    /// Swift stubs stay. Throws ``ScriptError`` with `file:line`.
    ///
    /// ```swift
    /// try moonmock.load(script: URL(fileURLWithPath: "Tests/Mocks"))   // Tests/Mocks/mocks.lua
    /// ```
    public func load(script url: URL, options: ScriptOptions = ScriptOptions()) throws {
        var isDirectory: ObjCBool = false
        var file = url
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            file = url.appendingPathComponent("mocks.lua")
        }
        let host = try ScriptHost(file: file.path, engine: engine, options: options)
        settings.withLock {
            $0.host?.stopWatching()
            $0.host = host
            $0.generation = host.current
            $0.scriptOptions = options
        }
    }

    /// Loads a script from Lua text; `baseDirectory` is where its fixtures and modules live.
    ///
    /// ```swift
    /// try moonmock.load(lua: #"mock.get("/ping", "pong")"#)
    /// ```
    public func load(lua source: String, baseDirectory: URL? = nil, options: ScriptOptions = ScriptOptions()) throws {
        let base = baseDirectory?.path ?? FileManager.default.currentDirectoryPath
        let generation = try engine.loadScript(source: source, baseDirectory: base, options: options)
        settings.withLock {
            $0.host?.stopWatching()
            $0.host = nil
            $0.generation = generation
            $0.scriptOptions = options
        }
    }

    /// Reloads the script whenever it, a module it requires or a fixture it reads changes —
    /// for long-running demo builds and previews. Same semantics as `moonmock serve`: a version
    /// that fails to load is not used (the error is in ``scriptStatus``), `mock.state` survives,
    /// requests in flight finish on the version they started with. Opt-in; needs a script
    /// loaded from a file.
    ///
    /// ```swift
    /// let moonmock = try Moonmock(script: URL(fileURLWithPath: "DemoMocks/mocks.lua"))
    /// try moonmock.watch()
    /// ```
    public func watch() throws {
        guard let host = settings.withLock({ $0.host }) else {
            throw MoonmockError.fixture("Moonmock: watch() needs a script loaded from a file (load(script:))")
        }
        try host.startWatching()
    }

    /// Stops reloading on changes.
    public func stopWatching() { settings.withLock { $0.host }?.stopWatching() }

    /// The script's generation number, load time and last reload error, when loaded from a file.
    public var scriptStatus: ScriptHost.Status? { settings.withLock { $0.host?.status } }

    /// Clears Swift stubs and other runtime rules, the journal and the state. Script rules stay.
    public func reset() {
        // In process there is no shared store: nothing here can throw.
        try? engine.reset()
    }

    // MARK: installing

    /// Adds this instance's protocol in front of `configuration.protocolClasses`, a class of its
    /// own for this configuration: what the configuration adds to the requests its sessions send
    /// (`httpAdditionalHeaders`, `timeoutIntervalForRequest`, its cookie storage) is read from it
    /// when the first request is answered, so set them before or after installing, before the
    /// session sends. (Apple's URLSession shows a protocol nothing of the task's session; on
    /// Linux the session's own configuration is read, so sessions configured by hand are seen
    /// as they are.) On Linux it also
    /// makes the configuration's URL cache skip its lookup for the requests this instance answers
    /// (a mock's response never comes from the cache, and swift-corelibs-foundation's lookup lists
    /// a directory on disk for every request). The cache itself is kept: everything else still
    /// reads and stores in it.
    ///
    /// ```swift
    /// let configuration = URLSessionConfiguration.default
    /// moonmock.install(into: configuration)
    /// let session = URLSession(configuration: configuration)
    /// ```
    public func install(into configuration: URLSessionConfiguration) {
        let cls = InstanceRegistry.protocolClass(of: self, for: configuration)
        let others = (configuration.protocolClasses ?? []).filter { !($0 is MoonmockURLProtocol.Type) }
        configuration.protocolClasses = [cls] + others
        #if canImport(FoundationNetworking)
        configuration.urlCache = MockedURLCache(wrapping: configuration.urlCache, claimant: cls)
        #endif
    }

    /// A configuration (ephemeral unless you pass another) that routes to this instance.
    ///
    /// ```swift
    /// let session = URLSession(configuration: moonmock.makeConfiguration())
    /// ```
    public func makeConfiguration(_ base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        install(into: base)
        return base
    }

    /// A session that routes to this instance.
    public func makeSession(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        URLSession(configuration: makeConfiguration(), delegate: delegate, delegateQueue: nil)
    }

    /// Routes `URLSession.shared` to this instance until ``uninstallGlobally()``. One instance
    /// at a time can be global.
    ///
    /// On Linux `URLSession.shared` only sees protocol classes registered before its first use.
    /// Moonmock registers its (otherwise inert) class when the first instance is created, so
    /// create an instance before anything touches `URLSession.shared`; if that was too late,
    /// this method says so on stderr. Sessions you configure yourself have no such limit: use
    /// ``install(into:)``.
    ///
    /// ```swift
    /// moonmock.installGlobally()
    /// defer { moonmock.uninstallGlobally() }
    /// let (data, _) = try await URLSession.shared.data(from: url)
    /// ```
    public func installGlobally() {
        InstanceRegistry.global = self
        #if canImport(FoundationNetworking)
        // corelibs Foundation copies the registered classes into the shared session's configuration
        // when it is made. Apple's keeps registered classes in a list of their own that the
        // configuration does not show, so there this check would warn falsely: it is Linux's only.
        let seen = URLSession.shared.configuration.protocolClasses?.contains { $0 == MoonmockURLProtocol.self } ?? false
        if !seen {
            FileHandle.standardError.write(Data(("Moonmock: URLSession.shared was created before the first Moonmock instance, "
                + "so it cannot be intercepted in this process; use a session from makeConfiguration() instead\n").utf8))
        }
        #endif
    }

    /// Stops routing `URLSession.shared` to this instance.
    public func uninstallGlobally() {
        if InstanceRegistry.global === self { InstanceRegistry.global = nil }
    }

    /// `true` while this instance answers `URLSession.shared`.
    public var isInstalledGlobally: Bool { InstanceRegistry.global === self }
}

/// Maps protocol classes to instances. Each instance gets its own generic specialization of
/// ``MoonmockURLProtocol`` (a distinct class object), because Linux's URLSession does not show a
/// custom protocol anything that identifies the session's configuration.
enum InstanceRegistry {
    private struct Entry {
        weak var instance: Moonmock?
        /// The configuration this class was made for by ``Moonmock/install(into:)``.
        var installed: InstalledConfiguration?
        /// The instance's own class, for a class made for a configuration.
        var base: ObjectIdentifier?
    }
    private struct Weak { weak var instance: Moonmock? }
    private static let instances = Locked<[ObjectIdentifier: Entry]>([:])
    private static let counter = AtomicInt(1)
    private static let globalInstance = Locked<Weak>(Weak())

    static var global: Moonmock? {
        get { globalInstance.withLock { $0.instance } }
        set { globalInstance.withLock { $0.instance = newValue } }
    }

    /// Registers the global protocol class the first time any instance is created. It claims
    /// nothing while no instance is installed globally.
    private static let globalClassRegistered: Bool = URLProtocol.registerClass(MoonmockURLProtocol.self)
    static func registerGlobalClassOnce() { _ = globalClassRegistered }

    static func register(_ instance: Moonmock, for cls: AnyClass) {
        instances.withLock { $0[ObjectIdentifier(cls)] = Entry(instance: instance) }
    }

    static func unregister(_ cls: AnyClass) {
        _ = instances.withLock { $0.removeValue(forKey: ObjectIdentifier(cls)) }
    }

    /// Forgets the classes made for configurations of the instance whose own class is `base`.
    static func unregisterConfigurations(of base: AnyClass) {
        let key = ObjectIdentifier(base)
        instances.withLock { $0 = $0.filter { $0.value.base != key } }
    }

    static func instance(for cls: AnyClass) -> Moonmock? {
        instances.withLock { $0[ObjectIdentifier(cls)]?.instance }
    }

    /// What the configuration `cls` was installed into adds to requests; `nil` for a class not
    /// made by ``Moonmock/install(into:)``.
    static func installedFacts(for cls: AnyClass) -> SessionFacts? {
        instances.withLock { $0[ObjectIdentifier(cls)]?.installed }?.facts
    }

    /// `instance`'s class for `configuration`: the one made when it was installed there before,
    /// else a new one registered with it.
    static func protocolClass(of instance: Moonmock, for configuration: URLSessionConfiguration) -> MoonmockURLProtocol.Type {
        let base = ObjectIdentifier(instance.protocolClass)
        if let known = configuration.protocolClasses?.first(where: { cls in
            instances.withLock { $0[ObjectIdentifier(cls)] }.map { $0.base == base && $0.installed?.configuration === configuration } ?? false
        }) as? MoonmockURLProtocol.Type {
            return known
        }
        let cls = makeProtocolClass()
        instances.withLock {
            $0[ObjectIdentifier(cls)] = Entry(instance: instance, installed: InstalledConfiguration(configuration), base: base)
        }
        return cls
    }

    /// A protocol class no other instance has: `TaggedURLProtocol<B1<B0<…<End>>>>`, the bits
    /// spelling a fresh number.
    static func makeProtocolClass() -> MoonmockURLProtocol.Type {
        let n = counter.add(1, ordering: .relaxed).oldValue
        func build<T: InstanceTag>(_ n: Int, _: T.Type) -> MoonmockURLProtocol.Type {
            if n == 0 { return TaggedURLProtocol<T>.self }
            return n & 1 == 0 ? build(n >> 1, B0<T>.self) : build(n >> 1, B1<T>.self)
        }
        return build(n, End.self)
    }
}

/// A configuration Moonmock was installed into, read once, when its first request is answered.
/// `@unchecked`: the configuration is only read, under the lock, after which the facts are kept.
final class InstalledConfiguration: @unchecked Sendable {
    let configuration: URLSessionConfiguration
    private let read = Locked<SessionFacts?>(nil)

    init(_ configuration: URLSessionConfiguration) { self.configuration = configuration }

    var facts: SessionFacts {
        read.withLock { known in
            if let known { return known }
            let facts = SessionFacts(configuration)
            known = facts
            return facts
        }
    }
}

protocol InstanceTag {}
enum End: InstanceTag {}
enum B0<Next: InstanceTag>: InstanceTag {}
enum B1<Next: InstanceTag>: InstanceTag {}
