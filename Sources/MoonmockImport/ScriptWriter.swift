import Foundation
import MoonmockCore

/// One request and the answer it got: what recording captures and every importer produces.
public struct RecordedExchange: Sendable {
    public var request: MockRequest
    public var status: Int
    public var headers: HTTPHeaders
    /// The body as the client reads it (content codings undone).
    public var body: [UInt8]
    /// When it was recorded, for the rule's comment.
    public var recordedAt: Date?
    /// Where it came from (`api.har: entry 3`), for the rule's comment.
    public var source: String?
    /// A delay before the answer, in milliseconds (importers of formats that have one).
    public var delayMilliseconds: Double?
    /// A fault instead of the answer: `connection_reset`, `empty_response`, `malformed_chunk`.
    public var fault: String?

    public init(request: MockRequest, status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                recordedAt: Date? = nil, source: String? = nil) {
        self.request = request
        self.status = status
        self.headers = headers
        self.body = body
        self.recordedAt = recordedAt
        self.source = source
    }
}

/// Something a source said that the script cannot express: listed at the top of the script,
/// never dropped silently.
public struct WriterNote: Sendable, Equatable {
    public let source: String
    public let message: String
    public init(source: String, message: String) {
        self.source = source
        self.message = message
    }
}

/// Turns exchanges into a `mocks.lua` a person wants to edit: one rule per distinct request
/// (method, path, query, GraphQL operation) in first-seen order, `mock.sequence` where the same
/// request got different answers, small JSON inline as Lua tables and the rest in `fixtures/`,
/// headers that say nothing about the mock left out, secrets redacted.
///
/// ```swift
/// var writer = ScriptWriter(options: .init(title: "Recorded from https://api.example.com"))
/// let output = writer.write(exchanges)
/// try output.save(in: URL(fileURLWithPath: "recorded"))   // recorded/mocks.lua, recorded/fixtures/…
/// ```
public struct ScriptWriter: Sendable {
    public struct Options: Sendable {
        /// The first comment line (what made the script).
        public var title: String
        /// Response header names (any case) and JSON keys written as `"REDACTED"`, on top of the usual secrets.
        public var redactHeaders: Set<String> = []
        public var redactJSONKeys: Set<String> = []
        /// Pin rules to the scheme, host and port they were captured from.
        public var keepHost = false
        /// With `keepHost`: the base URL rules are pinned to instead of the request's own origin
        /// (a recording's upstream, whose requests reached the recorder).
        public var pinnedBase: String?
        /// Cookie names whose `Set-Cookie` values are written as `REDACTED` (on top of session-like ones).
        public var redactCookies: Set<String> = []
        /// Keep every `Set-Cookie` value as it was (`--keep-cookies`).
        public var keepCookies = false
        /// A rule answers only the query it was captured with: the same parameters and values, no
        /// other (`exact_query = true`).
        public var exactQuery = true
        /// Write the answer's `Content-Type` unless the builder gives exactly that one (`false`:
        /// leave out one the builder's type starts with, as `application/json` for `mock.json`:
        /// what a script made from a spec rather than from traffic prefers).
        public var exactContentType = true
        /// Bodies up to this many bytes go inline; larger ones, and binary ones, to fixtures.
        public var inlineLimit = 256
        /// `false`: every body inline, binary ones as escaped strings (a script printed alone).
        public var useFixtures = true
        public init(title: String) { self.title = title }
    }

    /// The script and its fixture files (paths relative to the script's folder).
    public struct Output: Sendable {
        public var script: String
        public var fixtures: [(path: String, bytes: [UInt8])]
        /// How many rules the script has.
        public var ruleCount: Int
        /// What the source said that the script does not (listed at its top too).
        public var notes: [WriterNote] = []

        /// Writes `mocks.lua` and the fixtures into `folder` (made when missing).
        public func save(in folder: URL) throws {
            let fm = FileManager.default
            try fm.createDirectory(at: folder, withIntermediateDirectories: true)
            for fixture in fixtures {
                let url = folder.appendingPathComponent(fixture.path)
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(fixture.bytes).write(to: url)
            }
            try Data(script.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        }
    }

    public var options: Options

    public init(options: Options) { self.options = options }

    /// Response headers that say nothing about the mock.
    static let dropped: Set<String> = ["date", "content-length", "connection", "transfer-encoding", "server", "via", "keep-alive",
                                       "content-encoding", "age", "x-served-by", "x-cache", "x-cache-hits", "x-timer", "alt-svc",
                                       "strict-transport-security", "cf-ray", "cf-cache-status", "expect-ct", "report-to", "nel",
                                       "accept-ranges", "x-request-id", "x-amzn-requestid",
                                       "x-amz-cf-id", "x-amz-cf-pop", "proxy-connection", "upgrade", "trailer", "te"]
    /// Header values that are secrets wherever they appear (`Set-Cookie`: see ``cookie(_:)``).
    static let secrets: Set<String> = ["authorization", "cookie", "x-api-key", "proxy-authorization"]

    /// The script for `exchanges`, with `notes` listed at the top.
    public func write(_ exchanges: [RecordedExchange], notes: [WriterNote] = []) -> Output {
        var groups: [(key: RuleKey, exchanges: [RecordedExchange])] = []
        var index: [RuleKey: Int] = [:]
        let cors = Self.crossOrigin(exchanges)
        // With mock.cors the server answers preflights itself, for whichever origin the page has on replay.
        for exchange in exchanges where cors == nil || !Self.isPreflight(exchange.request) {
            let key = RuleKey(exchange.request, keepHost: options.keepHost, pinnedBase: options.pinnedBase)
            if let i = index[key] { groups[i].exchanges.append(exchange) } else {
                index[key] = groups.count
                groups.append((key, [exchange]))
            }
        }
        var fixtures = Fixtures()
        var rules: [String] = []
        for group in groups { rules += self.rules(group.key, group.exchanges, &fixtures) }
        var out = "-- \(options.title)\n"
        out += "-- \(rules.count) rule\(rules.count == 1 ? "" : "s"), in the order their requests were first seen. Edit freely:\n"
        out += "-- `moonmock check mocks.lua` lists them, `moonmock serve mocks.lua` serves them.\n"
        if !notes.isEmpty {
            out += "--\n-- Not converted (\(notes.count)):\n"
            for note in notes { out += "--   \(note.source): \(note.message.replacingOccurrences(of: "\n", with: " "))\n" }
        }
        if let cors {
            out += "\n-- Pages of another origin called this API: preflights are answered, and every answer lets the page read it.\n"
            out += "mock.cors { credentials = \(cors) }\n"
        }
        for rule in rules { out += "\n" + rule }
        return Output(script: out, fixtures: fixtures.files, ruleCount: rules.count, notes: notes)
    }

    /// Whether pages of another origin called the API (a request whose `Origin` is not its
    /// own): then whether they sent credentials (cookies, or an answer allowing them); `nil` if none did.
    static func crossOrigin(_ exchanges: [RecordedExchange]) -> Bool? {
        var seen = false, credentials = false
        for exchange in exchanges {
            guard let origin = exchange.request.headers["origin"], origin != "null",
                  origin.lowercased() != exchange.request.origin.lowercased() else { continue }
            seen = true
            if exchange.request.headers["cookie"] != nil || exchange.headers["access-control-allow-credentials"] == "true" { credentials = true }
        }
        return seen ? credentials : nil
    }

    /// A browser's CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`.
    static func isPreflight(_ request: MockRequest) -> Bool {
        request.method == "OPTIONS" && request.headers["origin"] != nil && request.headers["access-control-request-method"] != nil
    }
}
