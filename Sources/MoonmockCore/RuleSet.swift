/// An immutable, indexed list of rules. Lookup walks a trie of literal path segments per
/// method, so its cost depends on the path's length, not on the number of rules.
///
/// ```swift
/// let set = RuleSet([ruleA, ruleB])
/// set.candidates(for: request)   // matching-path rules in evaluation order
/// ```
public final class RuleSet: Sendable {
    /// Rules in evaluation order before priorities apply.
    public let rules: [Rule]
    private let byMethod: [String: RouteTrie]
    private let anyMethod: RouteTrie
    private let hasPriorities: Bool
    /// What the rules' responders need alive (a script generation and its VM). The set keeps
    /// it for as long as the set itself is in use, e.g. by requests still in flight.
    public let owner: (any AnyObject & Sendable)?

    public init(_ rules: [Rule], owner: (any AnyObject & Sendable)? = nil) {
        self.rules = rules
        self.owner = owner
        var byMethod: [String: RouteTrie] = [:]
        let any = RouteTrie()
        for (index, rule) in rules.enumerated() {
            if let m = rule.method {
                let trie = byMethod[m] ?? RouteTrie()
                trie.insert(rule.pattern.segments, index, operation: rule.graphQLOperation)
                byMethod[m] = trie
            } else {
                any.insert(rule.pattern.segments, index, operation: rule.graphQLOperation)
            }
        }
        self.byMethod = byMethod
        anyMethod = any
        hasPriorities = rules.contains { $0.priority != 0 }
    }

    public static let empty = RuleSet([])

    /// Indices of rules whose method and path structure can match, in evaluation order:
    /// higher priority first, then registration order. HEAD requests try GET rules after
    /// every HEAD (and any-method) rule.
    func candidates(for request: MockRequest) -> [Int] {
        let path = request.pathSegments
        let operation = { () -> String? in request.graphQLOperationName }
        var out: [Int] = []
        if !byMethod.isEmpty { byMethod[request.method]?.collect(path, operation, into: &out) }
        if !anyMethod.isEmpty { anyMethod.collect(path, operation, into: &out) }
        order(&out)
        if request.method == "HEAD", let get = byMethod["GET"] {
            var fallback: [Int] = []
            get.collect(path, operation, into: &fallback)
            order(&fallback)
            out += fallback
        }
        return out
    }

    private func order(_ out: inout [Int]) {
        if out.count > 1 {
            if hasPriorities {
                out.sort { a, b in
                    let pa = rules[a].priority, pb = rules[b].priority
                    return pa != pb ? pa > pb : a < b
                }
            } else {
                out.sort()
            }
        }
    }
}

/// A trie over path segments. Built once, then read concurrently.
final class RouteTrie: @unchecked Sendable {
    private final class Node {
        var literals: [String: Node] = [:]
        var parameter: Node?
        var terminal: [Int] = []
        /// Terminal rules that require a GraphQL operation, by operation name.
        var operations: [String: [Int]] = [:]
        var rest: [Int] = []
    }

    private let root = Node()
    private(set) var isEmpty = true

    func insert(_ segments: [RoutePattern.Segment], _ index: Int, operation: String?) {
        isEmpty = false
        var node = root
        for segment in segments {
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
                node.rest.append(index)
                return
            }
        }
        if let operation {
            node.operations[operation, default: []].append(index)
        } else {
            node.terminal.append(index)
        }
    }

    /// Appends the rules that can match `path`; `operation` yields the request's GraphQL
    /// operation name and is only called when a node indexes operations.
    func collect(_ path: [String], _ operation: () -> String?, into out: inout [Int]) {
        walk(root, path, 0, operation, &out)
    }

    private func walk(_ node: Node, _ path: [String], _ i: Int, _ operation: () -> String?, _ out: inout [Int]) {
        if !node.rest.isEmpty { out.append(contentsOf: node.rest) }
        if i == path.count {
            if !node.terminal.isEmpty { out.append(contentsOf: node.terminal) }
            if !node.operations.isEmpty, let op = operation(), let rules = node.operations[op] {
                out.append(contentsOf: rules)
            }
            return
        }
        if !node.literals.isEmpty, let next = node.literals[path[i]] { walk(next, path, i + 1, operation, &out) }
        if let next = node.parameter { walk(next, path, i + 1, operation, &out) }
    }
}
