import MoonmockCore

/// A response header as the script writes it.
enum WrittenHeader: Equatable {
    /// One value, or the field repeated (`Set-Cookie`, `Link`): a string or a list of strings.
    case values([String])
    /// Rendered per request: a URL that pointed back at the origin the client used.
    case template(String)

    var lua: String {
        switch self {
        case .values(let v) where v.count == 1: return LuaLiteral.string(v[0])
        case .values(let v): return "{ " + v.map(LuaLiteral.string).joined(separator: ", ") + " }"
        case .template(let t): return "mock.template(\(LuaLiteral.string(t)))"
        }
    }
}

/// Absolute URLs in response headers moved from one origin to another: the recorder points
/// the upstream's at itself, the writer makes those a template of the request's own origin.
///
/// ```swift
/// URLRewriting.replacing("https://api.example.com", with: "http://127.0.0.1:8080",
///                        in: "<https://api.example.com/items?page=2>; rel=\"next\"")   // <http://127.0.0.1:8080/items?page=2>; rel="next"
/// ```
public enum URLRewriting {
    /// The response headers that carry URLs a client follows.
    public static let headers: Set<String> = ["location", "content-location", "link", "refresh"]

    /// `value` with every `from` (any case) that starts a URL, its origin or path ending
    /// there (`from` followed by `/`, `?`, `#`, `>`, `;`, `,`, a space, a quote or the end), as `to`.
    public static func replacing(_ from: String, with to: String, in value: String) -> String {
        guard !from.isEmpty, value.range(of: from, options: .caseInsensitive) != nil else { return value }
        var out = "", rest = Substring(value)
        while let r = rest.range(of: from, options: .caseInsensitive) {
            let next = rest[r.upperBound...].first
            let ends = next.map { "/?#>;, \"'".contains($0) } ?? true
            out += rest[..<r.lowerBound] + (ends ? to : String(rest[r]))
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension ScriptWriter {
    /// Headers whose absolute URLs are rebuilt on the request's own origin when written.
    static let urlHeaders = URLRewriting.headers

    /// The response's headers as the script writes them, in first-seen order: those that say
    /// nothing about the mock left out, repeated fields kept as lists, secrets and session
    /// cookies redacted, URLs that pointed at the origin the client used (`origin`) made
    /// templates of `{{req.origin}}`, and an `Access-Control-Allow-Origin` naming one origin
    /// answering the request's own `Origin`.
    func writtenHeaders(_ headers: HTTPHeaders, origin: String?) -> [(name: String, value: WrittenHeader)] {
        let redacted = Set(options.redactHeaders.map { $0.lowercased() }).union(Self.secrets)
        var order: [String] = [], names: [String: String] = [:], values: [String: [String]] = [:]
        for field in headers {
            let lower = field.name.lowercased()
            guard !Self.dropped.contains(lower) else { continue }
            var value = field.value
            if lower == "set-cookie" && !options.redactHeaders.contains(where: { $0.lowercased() == "set-cookie" }) {
                value = cookie(value)
            } else if redacted.contains(lower) {
                value = "REDACTED"
            }
            if values[lower] == nil { order.append(lower); names[lower] = field.name }
            values[lower, default: []].append(value)
        }
        var out: [(name: String, value: WrittenHeader)] = []
        var varyOrigin = false
        for lower in order {
            let list = values[lower]!
            let name = names[lower]!
            if lower == "access-control-allow-origin", list.count == 1, list[0] != "*", list[0] != "null" {
                out.append((name, .template("{{req.headers.origin}}")))
                varyOrigin = true
                continue
            }
            if Self.urlHeaders.contains(lower), list.count == 1, let origin, let rebuilt = Self.onOrigin(list[0], origin) {
                out.append((name, .template(rebuilt)))
                continue
            }
            if Self.urlHeaders.contains(lower), let origin, list.contains(where: { Self.onOrigin($0, origin) != nil }) {
                // A repeated Link: one field, its values joined (RFC 9110 §5.3 lets a list be either).
                out.append((name, .template(list.map { Self.onOrigin($0, origin) ?? $0 }.joined(separator: ", "))))
                continue
            }
            out.append((name, .values(list)))
        }
        if varyOrigin {
            if let i = out.firstIndex(where: { $0.name.lowercased() == "vary" }), case .values(let v) = out[i].value {
                if !v.joined(separator: ",").lowercased().contains("origin") { out[i].value = .values(v.count == 1 ? [v[0] + ", Origin"] : v + ["Origin"]) }
            } else {
                out.append(("Vary", .values(["Origin"])))
            }
        }
        return out
    }

    /// `value` with the URLs on `origin` as URLs on `{{req.origin}}`; `nil` if it has none.
    static func onOrigin(_ value: String, _ origin: String) -> String? {
        let rebuilt = URLRewriting.replacing(origin, with: "{{req.origin}}", in: value)
        return rebuilt == value ? nil : rebuilt
    }

    /// A `Set-Cookie` value with its name and attributes kept and its value redacted when the
    /// cookie holds a session (see ``isSessionCookie(_:attributes:)``); `--keep-cookies` keeps all.
    func cookie(_ field: String) -> String {
        guard !options.keepCookies, let eq = field.firstIndex(of: "=") else { return field }
        let name = field[..<eq].trimmingCharacters(in: .whitespaces)
        let end = field[eq...].firstIndex(of: ";") ?? field.endIndex
        let attributes = field[end...]
        let redact = options.redactCookies.contains { $0.lowercased() == name.lowercased() }
            || Self.isSessionCookie(name, attributes: String(attributes))
        return redact ? "\(name)=REDACTED\(attributes)" : field
    }

    /// A cookie that identifies a session: `HttpOnly` (no script reads it), or named like one
    /// (`session`, `sid`, `auth`, `token`, `jwt`, `remember`, `login`); a CSRF or XSRF cookie,
    /// which the page's script reads and sends back, is not.
    static func isSessionCookie(_ name: String, attributes: String) -> Bool {
        let lower = name.lowercased()
        if lower.contains("csrf") || lower.contains("xsrf") { return false }
        if attributes.lowercased().split(separator: ";").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "httponly" }) { return true }
        return ["session", "sess", "sid", "auth", "token", "jwt", "remember", "login"].contains { lower.contains($0) }
    }
}
