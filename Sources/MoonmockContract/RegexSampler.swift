import MoonmockCore
/// A string an ECMAScript-style `pattern` matches: literals, escapes (`\d`, `\w`, `\s`, `\.`),
/// classes (`[a-z0-9_]`, `[^...]`), `.`, groups (`(...)`, `(?:...)`), alternation and
/// quantifiers (`?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`). A pattern is a search: without `^` and `$`
/// any string containing a match matches, so the sample is the match alone.
///
/// ```swift
/// var random = SeededRandom(seed: 1)
/// RegexSampler("^[A-Z]{3}-\\d{4}$", random: &random)?.sample()   // "QXA-4821"
/// ```
struct RegexSampler: Sendable {
    indirect enum Node: Sendable {
        case literal(Character)
        case set([ClosedRange<Character>], negated: Bool)
        case group([[Node]])            // alternatives, each a sequence
        case repeated(Node, Int, Int)
    }

    let alternatives: [[Node]]
    var random: SeededRandom

    /// `nil` for what this does not read (back-references, lookaround).
    init?(_ pattern: String, random: inout SeededRandom) {
        var chars = Array(pattern)[...]
        guard let parsed = Self.parseAlternatives(&chars), chars.isEmpty else { return nil }
        alternatives = parsed
        self.random = random
        _ = random.next()
    }

    mutating func sample() -> String {
        var out = ""
        let seq = alternatives[random.below(alternatives.count)]
        for node in seq { emit(node, &out) }
        return out
    }

    private mutating func emit(_ node: Node, _ out: inout String) {
        switch node {
        case .literal(let c): out.append(c)
        case .set(let ranges, let negated):
            if negated {
                let pool = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789").filter { c in !ranges.contains { $0.contains(c) } }
                out.append(pool.isEmpty ? "~" : pool[random.below(pool.count)])
            } else if let range = ranges.isEmpty ? nil : ranges[random.below(ranges.count)] {
                let lo = range.lowerBound.unicodeScalars.first!.value, hi = range.upperBound.unicodeScalars.first!.value
                let v = lo + UInt32(random.below(Int(min(hi - lo, 10_000)) + 1))
                out.append(Character(Unicode.Scalar(v) ?? "a"))
            }
        case .group(let alternatives):
            for n in alternatives[random.below(alternatives.count)] { emit(n, &out) }
        case .repeated(let inner, let least, let most):
            let count = least + random.below(min(most, least + 3) - least + 1)
            for _ in 0..<count { emit(inner, &out) }
        }
    }

    private static func parseAlternatives(_ s: inout ArraySlice<Character>) -> [[Node]]? {
        var alternatives: [[Node]] = [[]]
        while let c = s.first, c != ")" {
            if c == "|" { s.removeFirst(); alternatives.append([]); continue }
            guard let atom = parseAtom(&s) else { return nil }
            guard let node = atom else { continue }   // an anchor
            guard let quantified = parseQuantifier(node, &s) else { return nil }
            alternatives[alternatives.count - 1].append(quantified)
        }
        return alternatives
    }

    /// An atom; `.some(nil)` for an anchor (`^`, `$`, `\b`).
    private static func parseAtom(_ s: inout ArraySlice<Character>) -> Node??  {
        let c = s.removeFirst()
        switch c {
        case "^", "$": return .some(nil)
        case ".": return .set(["a"..."z", "0"..."9"], negated: false)
        case "(":
            if s.first == "?" {
                s.removeFirst()
                guard s.first == ":" else { return nil }   // lookaround and named groups: not read
                s.removeFirst()
            }
            guard let inner = parseAlternatives(&s), s.first == ")" else { return nil }
            s.removeFirst()
            return .group(inner)
        case "[": return parseSet(&s).map { .some($0) } ?? nil
        case "\\":
            guard let e = s.first else { return nil }
            s.removeFirst()
            if e == "b" || e == "B" { return .some(nil) }
            if e.isNumber && e != "0" { return nil }   // a back-reference
            return escape(e)
        case "*", "+", "?", "{", ")", "|": return nil
        default: return .literal(c)
        }
    }

    private static func escape(_ e: Character) -> Node {
        switch e {
        case "d": return .set(["0"..."9"], negated: false)
        case "D": return .set(["a"..."z"], negated: false)
        case "w": return .set(["a"..."z", "A"..."Z", "0"..."9", "_"..."_"], negated: false)
        case "W": return .literal("-")
        case "s": return .literal(" ")
        case "S": return .set(["a"..."z"], negated: false)
        case "n": return .literal("\n")
        case "t": return .literal("\t")
        default: return .literal(e)
        }
    }

    private static func parseSet(_ s: inout ArraySlice<Character>) -> Node? {
        var negated = false
        if s.first == "^" { negated = true; s.removeFirst() }
        var ranges: [ClosedRange<Character>] = []
        var first = true
        while let c = s.first, c != "]" || first {
            first = false
            s.removeFirst()
            var low = c
            if c == "\\", let e = s.first {
                s.removeFirst()
                if case .set(let r, false) = escape(e) { ranges += r; continue }
                if case .literal(let l) = escape(e) { low = l }
            }
            if s.first == "-", s.dropFirst().first.map({ $0 != "]" }) == true {
                s.removeFirst()
                var high = s.removeFirst()
                if high == "\\", let e = s.first { s.removeFirst(); if case .literal(let l) = escape(e) { high = l } }
                if low <= high { ranges.append(low...high) }
            } else {
                ranges.append(low...low)
            }
        }
        guard s.first == "]" else { return nil }
        s.removeFirst()
        return .set(ranges, negated: negated)
    }

    private static func parseQuantifier(_ node: Node, _ s: inout ArraySlice<Character>) -> Node? {
        var result = node
        switch s.first {
        case "?": s.removeFirst(); result = .repeated(node, 0, 1)
        case "*": s.removeFirst(); result = .repeated(node, 0, 3)
        case "+": s.removeFirst(); result = .repeated(node, 1, 3)
        case "{":
            var copy = s
            copy.removeFirst()
            let digits = String(copy.prefix { $0.isNumber || $0 == "," })
            copy.removeFirst(digits.count)
            let lowText = digits.split(separator: ",", omittingEmptySubsequences: false).first.map { String($0) } ?? ""
            guard copy.first == "}", let least = Int(lowText) else {
                return nil   // a literal brace: not read
            }
            copy.removeFirst()
            s = copy
            let parts = digits.split(separator: ",", omittingEmptySubsequences: false)
            let upper: Int? = parts.count > 1 ? Int(String(parts[1])) : nil
            let most = parts.count == 1 ? least : (upper ?? least + 3)
            guard most >= least, most <= 10_000 else { return nil }
            result = .repeated(node, least, most)
        default: return node
        }
        if s.first == "?" || s.first == "+" { s.removeFirst() }   // lazy and possessive: the same strings
        return result
    }
}
