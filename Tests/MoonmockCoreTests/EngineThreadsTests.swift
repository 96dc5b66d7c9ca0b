import Foundation
@testable import MoonmockCore
import Testing

/// The engine on several threads at once: each thread keeps its own view of the rules, its own
/// journal ring and its own hit-count stripe; what callers read must not show the seams.
@Suite("Engine on several threads")
struct EngineThreadsTests {
    /// Runs `body(thread)` on `count` threads at once and waits for all of them.
    private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for t in 0..<count {
            group.enter()
            Thread {
                body(t)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @Test("hits and the journal add up across threads; the journal keeps the newest, in time order")
    func countsAndJournal() throws {
        let engine = Engine(journalCapacity: 50)
        engine.add(try Rule(method: "GET", pattern: "/n/:i") { _ in .text("ok") })
        onThreads(4) { t in
            for i in 0..<100 { _ = engine.handle(MockRequest(method: "GET", url: "http://x/n/\(t * 1000 + i)")) }
        }
        #expect(engine.allRules[0].hits == 400)
        let entries = engine.journal.entries()
        #expect(entries.count == 50)
        #expect(Set(entries.map(\.id)).count == 50)
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
        // The newest 50: recorded after every entry that was dropped.
        let after = engine.handle(MockRequest(method: "GET", url: "http://x/n/last"))
        #expect(engine.journal.entries().last?.id == after.request.id)
        #expect(engine.journal.entries().count == 50)
        engine.journal.clear()
        #expect(engine.journal.entries().isEmpty)
    }

    @Test("a thread that served before sees rules added and removed since")
    func rulesChangeUnderAThread() throws {
        let engine = Engine()
        let worker = SerialWorker()
        #expect(worker.run { engine.handle(MockRequest(method: "GET", url: "http://x/a")).matched } == false)
        let rule = try Rule(method: "GET", pattern: "/a") { _ in .text("a") }
        engine.add(rule)
        #expect(worker.run { engine.handle(MockRequest(method: "GET", url: "http://x/a")).matched } == true)
        engine.remove(rule)
        #expect(worker.run { engine.handle(MockRequest(method: "GET", url: "http://x/a")).matched } == false)
    }

    @Test("a responder may ask the engine again, even while the rules change")
    func nested() throws {
        let engine = Engine()
        engine.add(try Rule(method: "GET", pattern: "/inner") { _ in .text("inner") })
        engine.add(try Rule(method: "GET", pattern: "/outer") { _ in
            engine.add(try Rule(method: "GET", pattern: "/added") { _ in .text("added") })
            let inner = engine.handle(MockRequest(method: "GET", url: "http://x/inner"))
            return .text("outer+" + String(decoding: inner.response.body, as: UTF8.self))
        })
        let outer = engine.handle(MockRequest(method: "GET", url: "http://x/outer"))
        #expect(String(decoding: outer.response.body, as: UTF8.self) == "outer+inner")
        #expect(engine.handle(MockRequest(method: "GET", url: "http://x/added")).matched)
    }
}

/// One long-lived thread that runs closures in turn (the same thread every time).
private final class SerialWorker: @unchecked Sendable {
    private let queue = DispatchQueue(label: "serial-worker")
    private var thread: Thread?

    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        queue.sync {
            let me = Thread.current
            if let thread { precondition(thread == me, "not the same thread") } else { thread = me }
            return body()
        }
    }
}
