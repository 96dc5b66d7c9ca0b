import Foundation

/// Watches a set of files without polling, so that every way editors save is seen: write in
/// place, write-to-temp-then-rename, delete and recreate. Bursts of events are debounced into
/// one call.
///
/// The event source is per platform and only says *that* something may have changed:
/// inotify on the files' directories on Linux (`FileWatcher+Inotify.swift`), kqueue vnode
/// events through Dispatch on Apple platforms (`FileWatcher+Kqueue.swift`). Which files did
/// is decided here, the same way everywhere: by the names inotify reports, and by comparing a
/// ``FileSnapshot`` of every watched file (existence, size, modification time, inode) before
/// and after the burst, which is all kqueue can go by.
///
/// ```swift
/// let watcher = try FileWatcher(debounce: 0.05) { changed in print("changed:", changed) }
/// watcher.watch(["/path/mocks.lua", "/path/fixtures/users.json"])
/// ```
public final class FileWatcher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "moonmock.watcher")
    /// Where `onChange` runs: not `queue`, so that it may call ``watch(_:)``.
    private let callbackQueue = DispatchQueue(label: "moonmock.watcher.callback")
    private let debounce: Double
    private let onChange: @Sendable ([String]) -> Void
    // Touched on `queue` only.
    private var source: (any FileEventSource)?
    private var files: Set<String> = []
    private var snapshot = FileSnapshot()
    private var named: Set<String> = []
    private var pending: DispatchWorkItem?

    /// A watcher that calls `onChange` (on a queue of its own, one call at a time) with the changed paths, `debounce`
    /// seconds after the last event of a burst. Throws when the platform's event source cannot start.
    public init(debounce: Double = 0.05, onChange: @escaping @Sendable ([String]) -> Void) throws {
        self.debounce = debounce
        self.onChange = onChange
        let source = try makeFileEventSource(queue: queue) { [weak self] paths in self?.event(paths) }
        queue.sync { self.source = source }
    }

    deinit { source?.cancel() }

    /// Watches exactly these files from now on (directories are added and dropped as needed).
    public func watch(_ paths: Set<String>) {
        let normalized = Set(paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        queue.sync {
            files = normalized
            snapshot = FileSnapshot(of: normalized)
            source?.watch(files: normalized)
        }
    }

    /// The directories being watched (for tests and diagnostics).
    public var watchedDirectories: Set<String> { queue.sync { source?.directories ?? [] } }

    /// Stops watching; no more calls after this returns.
    public func stop() {
        queue.sync {
            pending?.cancel()
            pending = nil
            files = []
            source?.cancel()
            source = nil
        }
    }

    /// On `queue`: the source saw something (`paths`: the files it names, if it can). The burst
    /// ends `debounce` seconds after its last event; then the snapshot says what changed.
    private func event(_ paths: [String]) {
        named.formUnion(paths.filter(files.contains))
        pending?.cancel()
        let item = DispatchWorkItem { [weak self] in self?.settle() }
        pending = item
        queue.asyncAfter(deadline: .now() + debounce, execute: item)
    }

    private func settle() {
        pending = nil
        let now = FileSnapshot(of: files)
        let paths = named.union(snapshot.changes(to: now)).sorted()
        snapshot = now
        named = []
        // A source that watches files themselves (kqueue) re-opens those an atomic save replaced.
        source?.watch(files: files)
        guard !paths.isEmpty else { return }
        let onChange = self.onChange
        callbackQueue.async { onChange(paths) }
    }
}

/// A platform's way of hearing that watched files may have changed. Runs its callbacks on the
/// queue it was made with; `watch` and `cancel` are called on that queue too.
protocol FileEventSource: AnyObject {
    /// Watches these files (and whatever directories that takes) from now on.
    func watch(files: Set<String>)
    /// The directories it watches.
    var directories: Set<String> { get }
    func cancel()
}

/// What a set of files looked like at one moment: enough to tell that a file was written,
/// replaced (another inode), created or deleted, without reading it.
///
/// ```swift
/// let before = FileSnapshot(of: ["/tmp/mocks.lua"])
/// // ... an editor saves ...
/// let changed = before.changes(to: FileSnapshot(of: ["/tmp/mocks.lua"]))   // ["/tmp/mocks.lua"]
/// ```
public struct FileSnapshot: Equatable, Sendable {
    /// A file's stamp; `nil` in ``stamps`` when the file does not exist.
    public struct Stamp: Equatable, Sendable {
        public var size: Int64
        public var modified: Int64   // nanoseconds since 1970
        public var inode: UInt64
        public var device: UInt64
    }

    public private(set) var stamps: [String: Stamp?] = [:]

    public init() {}

    /// Reads each file's stamp now.
    public init(of paths: Set<String>) {
        for path in paths { stamps[path] = Self.stamp(path) }
    }

    /// The files whose stamp differs in `later` (written, replaced, created, deleted), sorted.
    public func changes(to later: FileSnapshot) -> [String] {
        later.stamps.compactMap { path, stamp in
            guard let before = stamps[path] else { return nil }   // newly watched: not a change
            return before == stamp ? nil : path
        }.sorted()
    }

    static func stamp(_ path: String) -> Stamp? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return Stamp(size: (attributes[.size] as? NSNumber)?.int64Value ?? -1,
                     modified: Int64(modified * 1e9),
                     inode: (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
                     device: (attributes[.systemNumber] as? NSNumber)?.uint64Value ?? 0)
    }
}
