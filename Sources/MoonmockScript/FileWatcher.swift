import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Watches a set of files through inotify on their directories (no polling), so that every
/// way editors save is seen: write in place, write-to-temp-then-rename, delete and recreate.
/// Bursts of events are debounced into one call.
///
/// ```swift
/// let watcher = try FileWatcher(debounce: 0.05) { changed in print("changed:", changed) }
/// watcher.watch(["/path/mocks.lua", "/path/fixtures/users.json"])
/// ```
public final class FileWatcher: @unchecked Sendable {
    private let fd: Int32
    private let queue = DispatchQueue(label: "moonmock.watcher")
    /// Where `onChange` runs: not `queue`, so that it may call ``watch(_:)``.
    private let callbackQueue = DispatchQueue(label: "moonmock.watcher.callback")
    private let source: DispatchSourceRead
    private let debounce: Double
    private let onChange: @Sendable ([String]) -> Void
    // Touched on `queue` only.
    private var directories: [Int32: String] = [:]
    private var files: Set<String> = []
    private var changed: Set<String> = []
    private var pending: DispatchWorkItem?

    /// A watcher that calls `onChange` (on a queue of its own, one call at a time) with the changed paths, `debounce`
    /// seconds after the last event of a burst.
    public init(debounce: Double = 0.05, onChange: @escaping @Sendable ([String]) -> Void) throws {
        #if os(Linux)
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        #else
        fd = -1
        #endif
        guard fd >= 0 else { throw CocoaError(.featureUnsupported) }
        self.debounce = debounce
        self.onChange = onChange
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.drain() }
        let descriptor = fd
        source.setCancelHandler { close(descriptor) }
        source.resume()
    }

    deinit { source.cancel() }

    /// Watches exactly these files from now on (directories are added and dropped as needed).
    public func watch(_ paths: Set<String>) {
        let normalized = Set(paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        queue.sync {
            files = normalized
            let wanted = Set(normalized.map { ($0 as NSString).deletingLastPathComponent })
            for (wd, dir) in directories where !wanted.contains(dir) {
                #if os(Linux)
                inotify_rm_watch(fd, wd)
                #endif
                directories[wd] = nil
            }
            let have = Set(directories.values)
            for dir in wanted where !have.contains(dir) {
                #if os(Linux)
                let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB)
                let wd = inotify_add_watch(fd, dir, mask)
                if wd >= 0 { directories[wd] = dir }
                #endif
            }
        }
    }

    /// The directories being watched (for tests and diagnostics).
    public var watchedDirectories: Set<String> { queue.sync { Set(directories.values) } }

    /// Stops watching; no more calls after this returns.
    public func stop() {
        queue.sync {
            pending?.cancel()
            pending = nil
            files = []
        }
        source.cancel()
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            var offset = 0
            while offset + 16 <= n {
                let wd = buffer.withUnsafeBytes { $0.load(fromByteOffset: offset, as: Int32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.load(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                offset += 16 + length
                guard let dir = directories[wd], !nameBytes.isEmpty else { continue }
                let path = dir + "/" + String(decoding: nameBytes, as: UTF8.self)
                if files.contains(path) { changed.insert(path) }
            }
        }
        guard !changed.isEmpty else { return }
        pending?.cancel()
        let item = DispatchWorkItem { [weak self] in
            guard let self else { return }
            let paths = self.changed.sorted()
            self.changed = []
            self.pending = nil
            let onChange = self.onChange
            self.callbackQueue.async { onChange(paths) }
        }
        pending = item
        queue.asyncAfter(deadline: .now() + debounce, execute: item)
    }
}
