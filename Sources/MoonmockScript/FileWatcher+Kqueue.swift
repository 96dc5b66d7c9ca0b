#if canImport(Darwin)
import Foundation

// Apple backend of FileWatcher: kqueue vnode events through Dispatch (iOS included; FSEvents is
// macOS-only). A directory's `.write` fires when an entry is created, deleted or renamed (an
// atomic save); a file's own source fires when it is written in place, extended, deleted or
// renamed. Events carry no names: FileWatcher's snapshot decides which files changed, and asks
// for `watch(files:)` again after each burst, which re-opens files an atomic save replaced.
// Not compiled on Linux (Dispatch there has no makeFileSystemObjectSource): docs/apple.md.

func makeFileEventSource(queue: DispatchQueue, onEvent: @escaping ([String]) -> Void) throws -> any FileEventSource {
    KqueueSource(queue: queue, onEvent: onEvent)
}

final class KqueueSource: FileEventSource {
    private let queue: DispatchQueue
    private let onEvent: ([String]) -> Void
    /// Directory or file path → its source and the inode it was opened on.
    private var sources: [String: (source: DispatchSourceFileSystemObject, inode: UInt64?)] = [:]
    private var dirs: Set<String> = []

    init(queue: DispatchQueue, onEvent: @escaping ([String]) -> Void) {
        self.queue = queue
        self.onEvent = onEvent
    }

    var directories: Set<String> { dirs }

    func watch(files: Set<String>) {
        dirs = Set(files.map { ($0 as NSString).deletingLastPathComponent })
        let wanted = dirs.union(files)
        for (path, entry) in sources {
            // Gone, or a file replaced by another inode: its old descriptor watches nothing now.
            let current = FileSnapshot.stamp(path)?.inode
            if !wanted.contains(path) || current != entry.inode {
                entry.source.cancel()
                sources[path] = nil
            }
        }
        for path in wanted where sources[path] == nil {
            let fd = open(path, O_EVTONLY)
            guard fd >= 0 else { continue }   // a file that does not exist yet: its directory sees it come
            let isDirectory = dirs.contains(path)
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: fd, eventMask: isDirectory ? [.write] : [.write, .extend, .attrib, .delete, .rename], queue: queue)
            source.setEventHandler { [weak self] in self?.onEvent(isDirectory ? [] : [path]) }
            source.setCancelHandler { close(fd) }
            source.resume()
            sources[path] = (source, FileSnapshot.stamp(path)?.inode)
        }
    }

    func cancel() {
        for entry in sources.values { entry.source.cancel() }
        sources = [:]
    }
}
#endif
