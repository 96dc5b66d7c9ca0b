/// Content types by file extension: what `mock.file` answers with, and what the script writer
/// leaves out of a recorded rule when the fixture's extension already says it.
public enum MIMEType {
    public static func forPath(_ path: String) -> String {
        let ext = path.split(separator: "/").last.flatMap { $0.contains(".") ? $0.split(separator: ".").last : nil }
        switch ext.map({ String($0).lowercased() }) {
        case "json": return "application/json"
        case "txt", "text": return "text/plain; charset=utf-8"
        case "html", "htm": return "text/html; charset=utf-8"
        case "xml": return "application/xml"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "pdf": return "application/pdf"
        case "graphql", "gql": return "application/graphql"
        case "yaml", "yml": return "application/yaml"
        default: return "application/octet-stream"
        }
    }
}
