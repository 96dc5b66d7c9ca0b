/// The parameters one match of a route pattern captured, in pattern order. Up to four are kept
/// inline, so that a match allocates nothing beyond the values' own storage (a short value,
/// like most ids, needs none); ``dictionary`` builds the `[String: String]` form when asked.
///
/// ```swift
/// let rule = try Rule(id: "order", method: "GET", pattern: RoutePattern("/users/:user/orders/:id")) { ctx in
///     .text("order \(ctx.captures["id"] ?? "") of \(ctx.captures["user"] ?? "")")
/// }
/// ```
public struct RouteCaptures: Sendable {
    private var first: (name: String, value: String)?
    private var second: (name: String, value: String)?
    private var third: (name: String, value: String)?
    private var fourth: (name: String, value: String)?
    private var more: [(name: String, value: String)] = []
    public private(set) var count = 0

    public init() {}

    mutating func append(_ name: String, _ value: String) {
        switch count {
        case 0: first = (name, value)
        case 1: second = (name, value)
        case 2: third = (name, value)
        case 3: fourth = (name, value)
        default: more.append((name, value))
        }
        count += 1
    }

    /// Calls `body` for each capture in pattern order (a later one of the same name wins, as in
    /// ``dictionary``).
    public func forEach(_ body: (_ name: String, _ value: String) throws -> Void) rethrows {
        if let first { try body(first.name, first.value) } else { return }
        if let second { try body(second.name, second.value) } else { return }
        if let third { try body(third.name, third.value) } else { return }
        if let fourth { try body(fourth.name, fourth.value) } else { return }
        for pair in more { try body(pair.name, pair.value) }
    }

    /// The value captured under `name` (the last one, when the pattern repeats a name).
    public subscript(name: String) -> String? {
        var found: String?
        forEach { n, v in if n == name { found = v } }
        return found
    }

    /// The captures as a dictionary.
    public var dictionary: [String: String] {
        var d: [String: String] = [:]
        forEach { d[$0] = $1 }
        return d
    }
}
