import Foundation
import MoonmockScript
import Testing

/// The portable core of the file watcher: what kqueue (which names no file) relies on alone to
/// tell which watched files an event was about.
@Suite("FileSnapshot: which watched files changed")
struct FileSnapshotTests {
    let dir: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-snapshot-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @Test("writes in place, atomic replaces, deletions and creations are changes; untouched files are not")
    func changes() throws {
        for name in ["a.lua", "b.json", "c.json"] { try Data("one".utf8).write(to: URL(fileURLWithPath: path(name))) }
        let watched: Set = [path("a.lua"), path("b.json"), path("c.json"), path("new.json")]
        let before = FileSnapshot(of: watched)
        #expect(before.changes(to: FileSnapshot(of: watched)) == [])

        // a.lua: the same size, written in place (a later modification time).
        Thread.sleep(forTimeInterval: 0.01)
        try Data("two".utf8).write(to: URL(fileURLWithPath: path("a.lua")))
        // b.json: replaced by rename, as editors save (another inode).
        try Data("one".utf8).write(to: URL(fileURLWithPath: path(".b.json.tmp")))
        #expect(rename(path(".b.json.tmp"), path("b.json")) == 0)
        // c.json deleted, new.json created.
        try FileManager.default.removeItem(atPath: path("c.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path("new.json")))

        #expect(before.changes(to: FileSnapshot(of: watched)) == [path("a.lua"), path("b.json"), path("c.json"), path("new.json")].sorted())
    }

    @Test("a file first watched in the later snapshot is not a change")
    func newlyWatched() throws {
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("x.lua")))
        let before = FileSnapshot(of: [])
        #expect(before.changes(to: FileSnapshot(of: [path("x.lua")])) == [])
    }
}
