import CLua
import Foundation
import LuaBridge
import MoonmockContract
import MoonmockCore
import MoonmockProto
import MoonmockSchema

/// One loaded version of a `mocks.lua`: its Lua VM, the rules it registered and the files it
/// read. Requests run on the generation they started on; hot reload builds a new generation
/// and swaps it into the engine.
///
/// ```swift
/// let engine = Engine()
/// let generation = try ScriptGeneration.load(file: "mocks.lua", engine: engine)
/// engine.setScriptRules(generation.makeRuleSet())
/// ```
public final class ScriptGeneration: @unchecked Sendable {
    /// The script's file name as it appears in messages (`mocks.lua`).
    public let displayName: String
    /// The folder `mock.file`, `mock.read` and `require` resolve against.
    public let baseDirectory: URL
    public let options: ScriptOptions
    /// The rules in registration order.
    public var rules: [Rule] { registered }
    /// Absolute paths of every file this generation read: the script, modules, fixtures.
    public var dependencies: Set<String> { lock.withLock { dependencySet } }
    /// Lines printed while loading.
    public internal(set) var loadLogs: [String] = []

    let engine: Engine
    let vm: LuaVM
    /// Guards `vm` and the mutable fields below: a VM is used by one thread at a time.
    let lock = VMLock()
    var dependencySet: Set<String> = []
    var registered: [Rule] = []
    /// The registered rules whose responders call into the VM (handler functions, variants);
    /// the others answer from Swift values and need no VM of a pool.
    var luaResponders: Set<ObjectIdentifier> = []
    /// Registry references of every Lua function run per request (handlers, variants' handlers,
    /// `when` predicates): what ``checkSharing()`` reads.
    var perRequestFunctions: [Int32] = []
    /// How many VMs of a pool run this script, set on the pool's first generation.
    public internal(set) var vmCount = 1
    /// The sharing check's verdict when the VM count was chosen automatically.
    public internal(set) var sharing: SharingVerdict?
    /// Rules with variants: id, names, default (declared to the engine once the load succeeds).
    public internal(set) var variantDeclarations: [VariantStore.Declaration] = []
    /// Mock-Bundles the script declared (handed to the engine once the load succeeds).
    public internal(set) var bundleDeclarations: [BundleRegistry.Declaration] = []
    /// The script's `mock.resource` collections (handed to the engine once the load succeeds).
    public internal(set) var resourceDeclarations: [ResourceRegistry.Declaration] = []
    /// Each collection's seeding function (a registry reference), run again after an admin reset.
    var resourceSeeders: [String: Int32] = [:]
    /// Their `schema`s, compiled once: `resource_check` validates bodies against them by number.
    var resourceSchemas: [JSONSchema] = []
    /// The script's `mock.chaos{...}` layers and `mock.chaos_profile`s (handed to the engine once the load succeeds).
    public internal(set) var chaosLayers: [ChaosPolicy] = []
    public internal(set) var chaosProfiles: [String: ChaosPolicy] = [:]
    /// The script's `mock.cors{...}` (handed to the engine once the load succeeds).
    public internal(set) var corsDeclaration: CORSPolicy?
    /// The script's `mock.spec(...)`s (handed to the engine once the load succeeds).
    public internal(set) var specDeclarations: [OpenAPIContract] = []
    /// The protobuf schemas `mock.proto` loaded, and the codec over them.
    public internal(set) var protoSchema = ProtoSchema()
    var protoCodec = ProtoCodec(ProtoSchema())
    var loading = false
    var current: RequestContext?
    /// The thread of the handler running now (host functions that wait check they are called
    /// from it), what it asked to wait for, and whether it is a `mock.after` function.
    var handlerThread: OpaquePointer?
    /// A stream generator's coroutine being resumed by the running code, whose waits it relays.
    var relayThread: OpaquePointer?
    var pendingWait: Suspension.Wait?
    var runningAfter = false
    var templates: [Template] = []
    var templateIDs: [String: Int] = [:]
    var templateContentTypes: [String] = []
    var sequenceCount = 0
    /// `mock.fake` while the script loads (no request), and the stream a resource's seed items
    /// are made with (``ScriptGeneration/hostFakeOverride(_:)``): each seeded by a key.
    var loadFake: Fake?
    var fakeOverride: Fake?
    /// `mock.schema`'s schemas, read once: tables by identity (kept referenced), files by path.
    var tableSchemas: [UnsafeRawPointer: (ref: Int32, schema: PreparedSchema)] = [:]
    var fileSchemas: [String: PreparedSchema] = [:]
    /// Hit counters of `mock.sequence` values, shared by every VM of a pool.
    var sequenceHits = SequenceCounters()
    var refs = Refs()
    /// `Content-Type: application/json` for this VM's JSON responses (a copy of its own, not the
    /// shared static list: see ``responseSpec(at:_:)``).
    let jsonHeaders = HTTPHeaders([("Content-Type", "application/json; charset=utf-8")])
    /// The headers of a handler's string result (built once, like ``jsonHeaders``).
    let textHeaders = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")])
    /// The C JSON encoder's output buffer, reused by every response of this VM.
    let jsonBuffer: UnsafeMutablePointer<mm_buf> = {
        let b = UnsafeMutablePointer<mm_buf>.allocate(capacity: 1)
        b.initialize(to: mm_buf(data: nil, len: 0, cap: 0))
        return b
    }()
    /// The C JSON decoder's cache of short strings (keys, operation names) for this VM; the
    /// strings themselves are in the registry table `refs.jsonStrings`.
    let jsonStrings: UnsafeMutablePointer<mm_json_strings> = {
        let c = UnsafeMutablePointer<mm_json_strings>.allocate(capacity: 1)
        c.initialize(to: mm_json_strings())
        return c
    }()

    /// Counters behind `mock.sequence`, by sequence id.
    final class SequenceCounters: Sendable {
        /// Where replicas count them together (`--store`), and the script's name there.
        private let store: (any SharedStore)?
        private let scope: String
        /// In memory: the engine's counts (which a reset rewinds), under a key of this
        /// generation's own (a reload starts every sequence afresh).
        private let counts: SequenceCounts?
        private static let generations = AtomicInt(0)
        private let generation = SequenceCounters.generations.add(1, ordering: .relaxed).oldValue

        init(store: (any SharedStore)? = nil, scope: String = "", counts: SequenceCounts? = nil) {
            self.store = store
            self.scope = scope
            self.counts = counts
        }

        /// The shared store's counter of sequence `id`, when replicas count it together.
        func sharedCounter(_ id: Int) -> String? { store == nil ? nil : "seq:\(scope)#\(id)" }

        /// The hit number (0-based) of this request for sequence `id`.
        func next(_ id: Int) throws -> Int {
            if let store { return Int(try store.count("seq:\(scope)#\(id)", by: 1)) - 1 }
            return (counts ?? Self.unowned).next("\(generation)#\(id)")
        }

        /// Counts for a generation made without an engine's (never, but kept total).
        private static let unowned = SequenceCounts()
    }

    /// Registry references the host keeps to prelude tables and pristine library functions.
    struct Refs {
        var resp: Int32 = 0
        var array: Int32 = 0
        var matcher: Int32 = 0
        var requestMeta: Int32 = 0
        var jsonStrings: Int32 = 0
        var stringFind: Int32 = 0
    }

    init(displayName: String, baseDirectory: URL, engine: Engine, options: ScriptOptions) throws {
        self.displayName = displayName
        self.baseDirectory = baseDirectory.standardizedFileURL
        self.engine = engine
        sequenceHits = engine.store != nil ? SequenceCounters(store: engine.store, scope: displayName)
            : SequenceCounters(counts: engine.sequenceCounts)
        self.options = options
        vm = try LuaVM(limits: options.limits, sandboxed: !options.unsafe)
    }

    deinit {
        mm_buf_free(jsonBuffer)
        jsonBuffer.deallocate()
        jsonStrings.deallocate()
    }

    /// Loads the script at `file`. Errors name `file:line`.
    public static func load(file: String, engine: Engine, options: ScriptOptions = ScriptOptions()) throws -> ScriptGeneration {
        try load(file: file, engine: engine, options: options, sequenceHits: nil)
    }

    static func load(file: String, engine: Engine, options: ScriptOptions, sequenceHits: SequenceCounters?) throws -> ScriptGeneration {
        let url = URL(fileURLWithPath: file).standardizedFileURL
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ScriptError.io("\(file): cannot read the script (\(FileManager.default.fileExists(atPath: url.path) ? "permission denied" : "no such file"))")
        }
        let generation = try ScriptGeneration(displayName: url.lastPathComponent,
                                              baseDirectory: url.deletingLastPathComponent(), engine: engine, options: options)
        generation.dependencySet.insert(url.path)
        if let sequenceHits { generation.sequenceHits = sequenceHits }
        try generation.run(Array(data))
        return generation
    }

    /// Loads a script from text; `baseDirectory` is where its fixtures and modules live.
    ///
    /// ```swift
    /// let g = try ScriptGeneration.load(source: #"mock.get("/ping", "pong")"#, engine: engine)
    /// ```
    public static func load(source: String, name: String = "mocks.lua", baseDirectory: String = FileManager.default.currentDirectoryPath,
                            engine: Engine, options: ScriptOptions = ScriptOptions()) throws -> ScriptGeneration {
        let generation = try ScriptGeneration(displayName: name, baseDirectory: URL(fileURLWithPath: baseDirectory, isDirectory: true),
                                              engine: engine, options: options)
        try generation.run(Array(source.utf8))
        return generation
    }

    private func run(_ code: [UInt8]) throws {
        try lock.withLock {
            try installAPI()
            do {
                try vm.load(code, chunkName: "@" + displayName)
            } catch let error as LuaError {
                throw ScriptError.syntax(error.message)
            }
            loading = true
            defer { loading = false }
            // Loading may register thousands of rules: give it a larger budget than one request.
            let limits = vm.limits
            vm.limits.instructions = limits.instructions > 0 ? limits.instructions * 10 : 0
            defer { vm.limits = limits }
            do {
                try vm.call(arguments: 0, results: 0)
            } catch let error as LuaError {
                throw ScriptError.load(error.message, traceback: error.traceback)
            }
            // A script serving gRPC also serves reflection and health, below its own rules.
            if !protoSchema.services.isEmpty {
                registered += GRPCBuiltins.rules(schema: protoSchema)
                let describe = Self.describer(protoSchema)
                engine.rpcDescriber.withLock { $0 = describe }
            }
        }
    }

    /// Runs one more chunk in this generation's VM (rules added at runtime: see
    /// ``RuntimeRules``) and returns the rules it registered. A chunk that fails registers none.
    func append(_ code: [UInt8], chunkName: String) throws -> [Rule] {
        try lock.withLock {
            let before = registered.count
            do {
                try vm.load(code, chunkName: chunkName)
            } catch let error as LuaError {
                throw ScriptError.syntax(error.message)
            }
            loading = true
            defer { loading = false }
            do {
                try vm.call(arguments: 0, results: 0)
            } catch let error as LuaError {
                let added = Set(registered[before...].map(ObjectIdentifier.init))
                luaResponders.subtract(added)
                registered.removeSubrange(before...)
                throw ScriptError.load(error.message, traceback: error.traceback)
            }
            return Array(registered[before...])
        }
    }

    /// Builds the indexed rule set to hand to ``Engine/setScriptRules(_:)``. The set keeps this
    /// generation (and its VM) alive while the engine or a request in flight uses it.
    public func makeRuleSet() -> RuleSet { RuleSet(registered, owner: self) }

    /// Runs `body` with exclusive use of the VM and `context` as the current request.
    func withVM<T>(_ context: RequestContext?, _ body: () throws -> T) rethrows -> T {
        lock.lock()
        current = context
        defer {
            current = nil
            lock.unlock()
        }
        return try body()
    }

    /// Records a file this generation depends on (for hot reload).
    func depend(on path: String) { dependencySet.insert(path) }
}
