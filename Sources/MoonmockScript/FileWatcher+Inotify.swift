#if os(Linux)
import Foundation
import Glibc

// Linux backend of FileWatcher: inotify on the watched files' directories (a rename onto a file,
// as editors save, is an event of the directory). Events name the files, so no file is opened.

func makeFileEventSource(queue: DispatchQueue, onEvent: @escaping ([String]) -> Void) throws -> any FileEventSource {
    try InotifySource(queue: queue, onEvent: onEvent)
}

final class InotifySource: FileEventSource {
    private let fd: Int32
    private let source: DispatchSourceRead
    private let onEvent: ([String]) -> Void
    private var watches: [Int32: String] = [:]

    init(queue: DispatchQueue, onEvent: @escaping ([String]) -> Void) throws {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw CocoaError(.featureUnsupported) }
        self.onEvent = onEvent
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let descriptor = fd
        source.setCancelHandler { close(descriptor) }
        source.setEventHandler { [weak self] in self?.drain() }
        source.resume()
    }

    var directories: Set<String> { Set(watches.values) }

    func watch(files: Set<String>) {
        let wanted = Set(files.map { ($0 as NSString).deletingLastPathComponent })
        for (wd, dir) in watches where !wanted.contains(dir) {
            inotify_rm_watch(fd, wd)
            watches[wd] = nil
        }
        let have = Set(watches.values)
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB)
        for dir in wanted where !have.contains(dir) {
            let wd = inotify_add_watch(fd, dir, mask)
            if wd >= 0 { watches[wd] = dir }
        }
    }

    func cancel() { source.cancel() }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var paths: [String] = []
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            var offset = 0
            while offset + 16 <= n {
                let wd = buffer.withUnsafeBytes { $0.load(fromByteOffset: offset, as: Int32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.load(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                offset += 16 + length
                guard let dir = watches[wd], !nameBytes.isEmpty else { continue }
                paths.append(dir + "/" + String(decoding: nameBytes, as: UTF8.self))
            }
        }
        if !paths.isEmpty { onEvent(paths) }
    }
}
#endif
