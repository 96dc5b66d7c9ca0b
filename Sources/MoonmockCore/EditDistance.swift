/// The nearest of some names to a misspelled one, for "did you mean" in messages.
///
/// ```swift
/// EditDistance.nearest(to: "--prot", among: ["--port", "--host"])   // "--port"
/// ```
public enum EditDistance {
    /// Levenshtein distance, ignoring ASCII case.
    public static func between(_ a: String, _ b: String) -> Int {
        let x = Array(a.lowercased().utf8), y = Array(b.lowercased().utf8)
        if x.isEmpty { return y.count }
        var previous = Array(0...y.count)
        var current = previous
        for i in 1...x.count {
            current[0] = i
            for j in stride(from: 1, through: y.count, by: 1) {
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// The name closest to `name` within a third of its length (at least 2 edits), or `nil`.
    public static func nearest(to name: String, among names: some Sequence<String>) -> String? {
        let limit = Swift.max(2, name.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in names {
            let d = between(name, candidate)
            if d <= limit, best.map({ d < $0.distance || (d == $0.distance && candidate < $0.name) }) ?? true {
                best = (candidate, d)
            }
        }
        return best?.name
    }
}
