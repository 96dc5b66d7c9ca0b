/// The rule indices one request may match, in evaluation order: up to eight kept inline (a
/// request rarely has more), so that routing allocates nothing.
struct Candidates {
    private var inline: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Everything, once there are more than fit inline.
    private var spilled: [Int]?
    private(set) var count = 0

    private static let inlineCapacity = 8

    subscript(_ k: Int) -> Int {
        if let spilled { return spilled[k] }
        return withUnsafeBytes(of: inline) { $0.load(fromByteOffset: k * MemoryLayout<Int>.stride, as: Int.self) }
    }

    mutating func append(contentsOf indices: UnsafeBufferPointer<Int>) {
        if spilled == nil && count + indices.count > Self.inlineCapacity { spilled = Array(self) }
        if spilled != nil {
            spilled!.append(contentsOf: indices)
        } else {
            withUnsafeMutableBytes(of: &inline) { raw in
                for (k, index) in indices.enumerated() {
                    raw.storeBytes(of: index, toByteOffset: (count + k) * MemoryLayout<Int>.stride, as: Int.self)
                }
            }
        }
        count += indices.count
    }

    /// Sorts the entries from `start` on (stable for equal keys only when `areInIncreasingOrder`
    /// breaks ties itself, as the rule order does).
    mutating func sort(from start: Int = 0, by areInIncreasingOrder: (Int, Int) -> Bool) {
        if count - start < 2 { return }
        if spilled != nil {
            spilled![start...].sort(by: areInIncreasingOrder)
            return
        }
        withUnsafeMutableBytes(of: &inline) { raw in
            let slots = raw.bindMemory(to: Int.self)
            // Insertion sort: a handful of entries.
            for i in (start + 1)..<count {
                let value = slots[i]
                var j = i
                while j > start && areInIncreasingOrder(value, slots[j - 1]) {
                    slots[j] = slots[j - 1]
                    j -= 1
                }
                slots[j] = value
            }
        }
    }
}

extension Candidates: Sequence {
    struct Iterator: IteratorProtocol {
        let list: Candidates
        var k = 0
        mutating func next() -> Int? {
            guard k < list.count else { return nil }
            defer { k += 1 }
            return list[k]
        }
    }
    func makeIterator() -> Iterator { Iterator(list: self) }
    var underestimatedCount: Int { count }
}
