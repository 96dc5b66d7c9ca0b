import Foundation

/// An immutable, indexed list of rules. Lookup walks a trie of literal path segments per
/// method, so its cost depends on the path's length, not on the number of rules.
///
/// ```swift
/// let set = RuleSet([ruleA, ruleB])
/// set.candidates(for: request)   // matching-path rules in evaluation order
/// ```
/// `@unchecked`: the raw buffers are written once, in `init`, and only read afterwards.
public final class RuleSet: @unchecked Sendable {
    /// Rules in evaluation order before priorities apply.
    public let rules: [Rule]
    /// One trie per method (a short list: compared, not hashed), and one for any-method rules.
    private let byMethod: [(method: String, trie: RouteTrie)]
    private let anyMethod: RouteTrie
    /// The tries again, borrowed per request (`byMethod` and `anyMethod` keep them alive).
    private let methodTries: UnsafeMutableBufferPointer<(method: String, trie: Unmanaged<RouteTrie>)>
    private let anyTrie: Unmanaged<RouteTrie>
    private let hasPriorities: Bool
    /// What the rules' responders need alive (a script generation and its VM). The set keeps
    /// it for as long as the set itself is in use, e.g. by requests still in flight.
    public let owner: (any AnyObject & Sendable)?

    /// The rules again, for the engine to borrow while routing: `rules` keeps them alive, and a
    /// borrowed rule costs no retain (its reference count is shared by every worker thread).
    /// A raw buffer, so that reading it retains no array either.
    private let borrowed: UnsafeMutableBufferPointer<Unmanaged<Rule>>
    /// No rules at all.
    let isEmpty: Bool
    /// The paths of live streaming calls (``Rule/liveStream``).
    let livePaths: Set<String>

    public init(_ rules: [Rule], owner: (any AnyObject & Sendable)? = nil) {
        self.rules = rules
        borrowed = .allocate(capacity: rules.count)
        _ = borrowed.initialize(from: rules.map { Unmanaged.passUnretained($0) })
        isEmpty = rules.isEmpty
        livePaths = Set(rules.filter(\.liveStream).map(\.pattern.source))
        self.owner = owner
        var methods: [String: [RouteTrie.Entry]] = [:]
        var any: [RouteTrie.Entry] = []
        for (index, rule) in rules.enumerated() {
            let entry = (rule.pattern.segments, index, rule.graphQLOperation)
            if let m = rule.method { methods[m, default: []].append(entry) } else { any.append(entry) }
        }
        byMethod = methods.map { ($0.key, RouteTrie($0.value)) }.sorted { $0.method < $1.method }
        anyMethod = RouteTrie(any)
        methodTries = .allocate(capacity: byMethod.count)
        _ = methodTries.initialize(from: byMethod.map { ($0.method, Unmanaged.passUnretained($0.trie)) })
        anyTrie = Unmanaged.passUnretained(anyMethod)
        hasPriorities = rules.contains { $0.priority != 0 }
    }

    deinit {
        borrowed.deallocate()
        methodTries.deinitialize()
        methodTries.deallocate()
    }

    public static let empty = RuleSet([])

    /// Rule `index`, borrowed.
    @inline(__always)
    func borrowedRule(_ index: Int) -> Unmanaged<Rule> { borrowed[index] }

    private func trie(_ method: String) -> Unmanaged<RouteTrie>? {
        for entry in methodTries where entry.method == method { return entry.trie }
        return nil
    }

    /// Indices of rules whose method and path structure can match, in evaluation order:
    /// higher priority first, then registration order. HEAD requests try GET rules after
    /// every HEAD (and any-method) rule.
    func candidates(for request: MockRequest) -> [Int] {
        request.withPathSegments { Array(candidates(for: request, $0)) }
    }

    func candidates(for request: MockRequest, _ path: PathSegments) -> Candidates {
        // The closure captures a pointer, not the request: captured, the request's storage would
        // be retained for every node the walk visits.
        withUnsafePointer(to: request) { request in
            candidates(path, method: request.pointee.method) { request.pointee.graphQLOperationName }
        }
    }

    private func candidates(_ path: PathSegments, method: String, _ operation: () -> String?) -> Candidates {
        var out = Candidates()
        if methodTries.count > 0, let trie = trie(method) {
            trie._withUnsafeGuaranteedRef { $0.collect(path, operation, into: &out) }
        }
        anyTrie._withUnsafeGuaranteedRef { if !$0.isEmpty { $0.collect(path, operation, into: &out) } }
        order(&out, from: 0)
        if method == "HEAD", let get = trie("GET") {
            let start = out.count
            get._withUnsafeGuaranteedRef { $0.collect(path, operation, into: &out) }
            order(&out, from: start)
        }
        return out
    }

    private func order(_ out: inout Candidates, from start: Int) {
        if hasPriorities {
            // Raw buffer: reading the rules through `rules` would retain the shared array.
            let rules = borrowed
            out.sort(from: start) { a, b in
                let pa = rules[a]._withUnsafeGuaranteedRef { $0.priority }, pb = rules[b]._withUnsafeGuaranteedRef { $0.priority }
                return pa != pb ? pa > pb : a < b
            }
        } else {
            out.sort(from: start, by: <)
        }
    }
}

/// A trie over path segments, built once and then flattened into a few contiguous arrays
/// (nodes, edges, the edges' bytes, rule indices) that are read concurrently. A lookup touches
/// a handful of cache lines and hashes nothing: literal edges are sorted by length and bytes and
/// binary-searched, so a node with thousands of literal children costs a dozen comparisons.
final class RouteTrie: Sendable {
    /// The builder's tree; discarded after ``init(_:)``.
    private final class Node {
        var literals: [String: Node] = [:]
        var parameter: Node?
        var terminal: [Int] = []
        /// Terminal rules that require a GraphQL operation, by operation name.
        var operations: [String: [Int]] = [:]
        var rest: [Int] = []
    }

    private struct FlatNode {
        var edges: Range<Int32> = 0..<0
        var parameter: Int32 = -1
        var terminal: Range<Int32> = 0..<0
        var rest: Range<Int32> = 0..<0
        /// Terminal rules by GraphQL operation: a range of `operationEdges`, whose `child` is an
        /// index into `operationRules`.
        var operations: Range<Int32> = 0..<0
    }

    private struct Edge {
        var text: Range<Int32>
        var child: Int32
    }

    // A class, so that handing the trie around retains one object, not five arrays.
    private let nodes: [FlatNode]
    private let edges: [Edge]
    private let text: [UInt8]
    private let indices: [Int]
    private let operationEdges: [Edge]
    private let operationRules: [Range<Int32>]
    let isEmpty: Bool

    /// A rule to index: its path segments, its index in the set, its GraphQL operation.
    typealias Entry = (segments: [RoutePattern.Segment], index: Int, operation: String?)

    init(_ entries: [Entry]) {
        let root = Node()
        for entry in entries { Self.insert(entry, into: root) }
        var builder = Builder()
        _ = builder.flatten(root)
        nodes = builder.nodes
        edges = builder.edges
        text = builder.text
        indices = builder.indices
        operationEdges = builder.operationEdges
        operationRules = builder.operationRules
        isEmpty = entries.isEmpty
    }

    private static func insert(_ entry: Entry, into root: Node) {
        var node = root
        for segment in entry.segments {
            switch segment {
            case .literal(let s):
                if let next = node.literals[s] { node = next } else {
                    let next = Node(); node.literals[s] = next; node = next
                }
            case .parameter:
                if let next = node.parameter { node = next } else {
                    let next = Node(); node.parameter = next; node = next
                }
            case .rest:
                node.rest.append(entry.index)
                return
            }
        }
        if let operation = entry.operation {
            node.operations[operation, default: []].append(entry.index)
        } else {
            node.terminal.append(entry.index)
        }
    }

    /// Lays the tree out in arrays, depth first.
    private struct Builder {
        var nodes: [FlatNode] = []
        var edges: [Edge] = []
        var text: [UInt8] = []
        var indices: [Int] = []
        var operationEdges: [Edge] = []
        var operationRules: [Range<Int32>] = []

        /// Appends `node` and its subtree; returns its index.
        mutating func flatten(_ node: Node) -> Int32 {
            let me = Int32(nodes.count)
            nodes.append(FlatNode())
            var flat = FlatNode()
            flat.terminal = append(node.terminal)
            flat.rest = append(node.rest)
            // Operation names are edges too: sorted, binary-searched, no dictionary per lookup.
            let firstOperation = Int32(operationEdges.count)
            for (name, rules) in node.operations.map({ (Array($0.key.utf8), $0.value) }).sorted(by: { Builder.less($0.0[...], $1.0[...]) }) {
                let start = Int32(text.count)
                text.append(contentsOf: name)
                operationEdges.append(Edge(text: start..<Int32(text.count), child: Int32(operationRules.count)))
                operationRules.append(append(rules))
            }
            flat.operations = firstOperation..<Int32(operationEdges.count)
            let literals = node.literals.map { (Array($0.key.utf8), $0.value) }.sorted { Builder.less($0.0[...], $1.0[...]) }
            let firstEdge = Int32(edges.count)
            for (bytes, _) in literals {
                let start = Int32(text.count)
                text.append(contentsOf: bytes)
                edges.append(Edge(text: start..<Int32(text.count), child: -1))
            }
            flat.edges = firstEdge..<Int32(edges.count)
            for (n, (_, child)) in literals.enumerated() { edges[Int(firstEdge) + n].child = flatten(child) }
            if let parameter = node.parameter { flat.parameter = flatten(parameter) }
            nodes[Int(me)] = flat
            return me
        }

        mutating func append(_ list: [Int]) -> Range<Int32> {
            let start = Int32(indices.count)
            indices.append(contentsOf: list)
            return start..<Int32(indices.count)
        }

        /// The edge order: shorter first, then bytewise.
        static func less<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
            if a.count != b.count { return a.count < b.count }
            return a.lexicographicallyPrecedes(b)
        }
    }

    /// Appends the rules that can match `path`; `operation` yields the request's GraphQL
    /// operation name and is only called when a node indexes operations.
    func collect(_ path: PathSegments, _ operation: () -> String?, into out: inout Candidates) {
        if nodes.isEmpty { return }
        // Raw buffers for the walk: no retain of the shared arrays per node visited.
        text.withUnsafeBufferPointer { text in
            edges.withUnsafeBufferPointer { edges in
                nodes.withUnsafeBufferPointer { nodes in
                    indices.withUnsafeBufferPointer { indices in
                        operationEdges.withUnsafeBufferPointer { operationEdges in
                            operationRules.withUnsafeBufferPointer { operationRules in
                                walk(0, path, 0, operation, &out, Tables(text: text, edges: edges, nodes: nodes, indices: indices,
                                                                         operationEdges: operationEdges, operationRules: operationRules))
                            }
                        }
                    }
                }
            }
        }
    }

    private struct Tables {
        let text: UnsafeBufferPointer<UInt8>
        let edges: UnsafeBufferPointer<Edge>
        let nodes: UnsafeBufferPointer<FlatNode>
        let indices: UnsafeBufferPointer<Int>
        let operationEdges: UnsafeBufferPointer<Edge>
        let operationRules: UnsafeBufferPointer<Range<Int32>>

        func rules(_ range: Range<Int32>) -> UnsafeBufferPointer<Int> {
            UnsafeBufferPointer(rebasing: indices[Int(range.lowerBound)..<Int(range.upperBound)])
        }
    }

    private func walk(_ n: Int32, _ path: PathSegments, _ i: Int, _ operation: () -> String?, _ out: inout Candidates, _ t: Tables) {
        let node = t.nodes[Int(n)]
        if !node.rest.isEmpty { out.append(contentsOf: t.rules(node.rest)) }
        if i == path.count {
            if !node.terminal.isEmpty { out.append(contentsOf: t.rules(node.terminal)) }
            if !node.operations.isEmpty, let op = operation(),
               let k = op.withUTF8Bytes({ find($0, in: node.operations, among: t.operationEdges, t) }) {
                out.append(contentsOf: t.rules(t.operationRules[Int(k)]))
            }
            return
        }
        if !node.edges.isEmpty, let child = find(path[i], in: node.edges, among: t.edges, t) { walk(child, path, i + 1, operation, &out, t) }
        if node.parameter >= 0 { walk(node.parameter, path, i + 1, operation, &out, t) }
    }

    /// Binary search of `segment` among a node's sorted edges (path literals or operation names).
    private func find(_ segment: UnsafeBufferPointer<UInt8>, in range: Range<Int32>, among edges: UnsafeBufferPointer<Edge>,
                      _ t: Tables) -> Int32? {
        var low = Int(range.lowerBound), high = Int(range.upperBound)
        while low < high {
            let mid = (low + high) / 2
            let edge = edges[mid]
            let label = UnsafeBufferPointer(rebasing: t.text[Int(edge.text.lowerBound)..<Int(edge.text.upperBound)])
            let order = Self.compare(label, segment)
            if order == 0 { return edge.child }
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    /// -1, 0 or 1 in the edge order.
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        if a.isEmpty { return 0 }
        let c = memcmp(a.baseAddress!, b.baseAddress!, a.count)
        return c == 0 ? 0 : (c < 0 ? -1 : 1)
    }
}
