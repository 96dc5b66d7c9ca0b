import Foundation

/// One thread that runs closures when their time comes: `mock.sleep`, webhook delays and
/// retries, `mock.after`, handler deadlines. No thread is held per wait; a closure should hand
/// real work elsewhere (a door's loop, a queue) and return.
///
/// ```swift
/// let cancel = Scheduler.shared.after(0.2) { print("200 ms later") }
/// cancel()   // it will not run
/// ```
public final class Scheduler: @unchecked Sendable {
    // @unchecked: `heap`, `serial` and `started` are used only under `condition`.
    public static let shared = Scheduler()

    private struct Entry {
        let due: UInt64
        let id: UInt64
        let body: @Sendable () -> Void
    }
    private let condition = NSCondition()
    private var heap: [Entry] = []
    private var cancelled: Set<UInt64> = []
    private var serial: UInt64 = 0
    private var started = false

    public init() {}

    /// Runs `body` on the scheduler's thread after `seconds`; the result cancels it.
    @discardableResult
    public func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let due = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, seconds) * 1e9)
        condition.lock()
        serial += 1
        let id = serial
        push(Entry(due: due, id: id, body: body))
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "moonmock.scheduler"
            thread.start()
        }
        if heap[0].id == id { condition.signal() }   // sooner than the thread waits for
        condition.unlock()
        return { [self] in
            condition.lock()
            if heap.contains(where: { $0.id == id }) { cancelled.insert(id) }
            condition.unlock()
        }
    }

    private func run() {
        condition.lock()
        while true {
            guard let first = heap.first else {
                condition.wait()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if first.due > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.due - now) / 1e9))
                continue
            }
            let entry = pop()
            if cancelled.remove(entry.id) != nil { continue }
            condition.unlock()
            entry.body()
            condition.lock()
        }
    }

    // A binary min-heap on (due, id): equal times run in the order they were scheduled.
    private func less(_ a: Entry, _ b: Entry) -> Bool { a.due != b.due ? a.due < b.due : a.id < b.id }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, less(heap[l], heap[m]) { m = l }
                if r < heap.count, less(heap[r], heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
