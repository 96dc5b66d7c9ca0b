/// Deadlines of one loop, earliest first; entries of closed or reused connections are skipped
/// when they come due (the serial tells a reused descriptor apart).
struct TimerHeap {
    struct Entry {
        let deadline: UInt64
        let fd: Int32
        let serial: UInt64
        /// An HTTP/2 stream's timer (0: the connection's own).
        var stream: Int32 = 0
    }

    private var heap: [Entry] = []

    var nextDeadline: UInt64? { heap.first?.deadline }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    /// The earliest entry if it is due by `now`.
    mutating func popDue(_ now: UInt64) -> Entry? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = parent * 2 + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
