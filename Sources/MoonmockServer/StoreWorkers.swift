import Foundation

/// Threads that answer the requests which may wait for a shared store (`--store`): an event
/// loop hands such a request here and serves its other connections meanwhile, so a Redis
/// round trip — or a Redis that stopped answering — holds up only the requests that need it.
/// Requests of a stateless rule never come here.
///
/// ```swift
/// let workers = StoreWorkers(threads: 8)
/// workers.submit { print("answered off the loop") }
/// ```
final class StoreWorkers: @unchecked Sendable {
    // @unchecked: `jobs`, `head` and `stopped` are read and written only under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var stopped = false
    let threads: Int

    init(threads: Int) {
        self.threads = max(1, threads)
        for index in 0..<self.threads {
            let thread = Thread { [self] in work() }
            thread.name = "moonmock-store-\(index)"
            thread.start()
        }
    }

    /// Runs `job` on one of the threads, in the order submitted.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The threads end once the jobs already submitted are done.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopped { condition.wait() }
            if head == jobs.count { condition.unlock(); return }
            let job = jobs[head]
            head += 1
            // Taken from the front without moving the rest; emptied when all are taken.
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job()
        }
    }
}
