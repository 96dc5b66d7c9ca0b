import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

/// Record an API that behaves as production APIs do, then replay it through both doors with
/// URLSession: queries told apart exactly, absolute URLs staying on whichever origin serves,
/// revalidation, repeated fields, a pre-compressed body, JSON key order, sequences rewound by reset.
@Suite("Faithful record and replay through both doors")
struct FaithfulReplayTests {
    static let upstreamScript = #"""
    local function items(body) return mock.json.raw(body, { headers = { Link = mock.template('<{{req.origin}}/items?page=2&per_page=3>; rel="next"') } }) end
    mock.get("/items", items('{"page": 1, "zeta": 1, "alpha": 2}'), { query = { per_page = "3" }, exact_query = true })
    mock.get("/items", items('{"page": 2, "zeta": 1, "alpha": 2}'), { query = { page = "2", per_page = "3" }, exact_query = true })
    mock.get("/items", mock.json.raw('{"all": true}'), { exact_query = true })
    mock.post("/login", mock.json({ ok = true }, { headers = { ["Set-Cookie"] = { "session=s3cr3t; HttpOnly; Path=/", "csrftoken=tok-1; Path=/" } } }))
    mock.get("/profile", mock.json({ name = "Ana" }, { headers = { ETag = '"v1"', ["Cache-Control"] = "no-cache" }, conditional = true }))
    mock.get("/asset.json", mock.text("\31\139\8\0\0\0\0\0\2\3\171\86\170\202\44\40\72\77\81\178\82\40\41\42\77\213\81\80\74\4\50\13\107\1\109\35\250\126\24\0\0\0",
      { headers = { ["Content-Encoding"] = "gzip", ["Content-Type"] = "application/json" } }))
    mock.get("/old", mock.status(302, nil, { headers = { Location = mock.template("{{req.origin}}/new") } }))
    mock.get("/new", "the new page")
    mock.get("/job", function()
      local n = mock.state:incr("job")
      return n < 2 and mock.json({ state = "pending" }, { status = 202 }) or { state = "done" }
    end)
    mock.graphql("GetUser", function(req) return { data = { id = req.json.variables.id } } end)
    """#

    static func graphQL(_ id: String) -> String { #"{"operationName":"GetUser","query":"q","variables":{"id":"\#(id)"}}"# }

    @Test("queries, Link and Location, cookies, ETag, a pre-compressed body, key order, variables and sequences replay as recorded")
    func faithful() async throws {
        let upstream = try Served(Self.upstreamScript, door: .socket)
        let recording = try Served("", door: .socket)
        defer { recording.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-faithful-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        _ = try await recording.fetch("/__moonmock/recordings/start", method: "POST", body: #"{"upstream": "\#(upstream.baseURL)", "out": "\#(out.path)"}"#)
        let paths = ["/items?per_page=3", "/items", "/items?page=2&per_page=3", "/profile", "/asset.json", "/job", "/job"]
        var live: [String: Served.Reply] = [:]
        for path in paths { live[path] = try await recording.fetch(path) }
        live["/login"] = try await recording.fetch("/login", method: "POST", body: "{}")
        live["/old"] = try await recording.fetch("/old")
        live["gql 7"] = try await recording.fetch("/graphql", method: "POST", body: Self.graphQL("7"))
        live["gql 8"] = try await recording.fetch("/graphql", method: "POST", body: Self.graphQL("8"))
        let revalidated = try await recording.fetch("/profile", headers: ["If-None-Match": #""v1""#])
        #expect(revalidated.status == 304)
        // Live, through the recorder: the upstream's URLs point at the recorder.
        #expect(live["/items?per_page=3"]?.headers["link"] == "<\(recording.baseURL)/items?page=2&per_page=3>; rel=\"next\"")
        #expect(live["/old"]?.url == recording.baseURL + "/new")
        let stopped = try await recording.fetch("/__moonmock/recordings/stop", method: "POST")
        #expect(stopped.status == 200, "\(stopped.body)")
        upstream.stop()

        let script = try String(contentsOf: out.appendingPathComponent("mocks.lua"), encoding: .utf8)
        #expect(script.contains("session=REDACTED; HttpOnly; Path=/") && script.contains("csrftoken=tok-1; Path=/") && !script.contains("s3cr3t"))
        #expect(!script.contains("Content-Encoding"), "\(script)")

        for door in Door.allCases {
            let replay = Moonmock()
            try replay.load(script: out)
            let server = door == .socket ? try Served.serve(replay.engine) : nil
            defer { server?.stop() }
            let session = door == .socket ? plainSession : replay.makeSession()
            let base = server?.baseURL ?? "http://replay.test:81"
            func fetch(_ path: String, method: String = "GET", body: String? = nil, headers: [String: String] = [:]) async throws -> Served.Reply {
                try await Served.fetch(session, base + path, method: method, body: body, headers: headers)
            }
            for path in paths.dropLast(2) {
                let reply = try await fetch(path), want = live[path]!
                #expect(reply.status == want.status && reply.body == want.body && reply.contentType == want.contentType, "\(door) \(path): \(reply.body)")
            }
            // Each query is its own rule; one never recorded is a near miss, not page 1.
            #expect(try await fetch("/items?per_page=3").body == #"{"page": 1, "zeta": 1, "alpha": 2}"#)
            // (The server answers the near miss with a 404; in-process it fails the task with it.)
            for miss in ["/items?page=9&per_page=3", "/items?per_page=3&extra=1"] {
                let reply = try? await fetch(miss)
                #expect(reply == nil && door == .inProcess || reply?.status == 404, "\(door) \(miss)")
            }
            // URLs on whichever origin serves.
            #expect(try await fetch("/items?per_page=3").headers["link"] == "<\(base)/items?page=2&per_page=3>; rel=\"next\"", "\(door)")
            let moved = try await fetch("/old")
            #expect(moved.url == base + "/new" && moved.body == "the new page", "\(door) \(moved.url)")
            // Revalidation: 304 only when the validator matches.
            #expect(try await fetch("/profile", headers: ["If-None-Match": #""v1""#]).status == 304, "\(door)")
            #expect(try await fetch("/profile", headers: ["If-None-Match": #""v0""#]).status == 200, "\(door)")
            #expect(try await fetch("/profile").headers["etag"] == #""v1""#)
            // The pre-compressed asset is kept decoded: a .json fixture that holds JSON.
            #expect(try await fetch("/asset.json").body == #"{"zipped": true, "a": 1}"#)
            // GraphQL variables pick the answer; the sequence rewinds on reset.
            #expect(try await fetch("/graphql", method: "POST", body: Self.graphQL("8")).body == live["gql 8"]!.body)
            #expect(try await fetch("/graphql", method: "POST", body: Self.graphQL("7")).body == live["gql 7"]!.body)
            let first = try await fetch("/job"), second = try await fetch("/job")
            #expect(first.status == 202 && second.status == 200, "\(door)")
            try replay.engine.reset()
            #expect(try await fetch("/job").status == 202, "\(door): reset rewinds the sequence")
            let login = try await fetch("/login", method: "POST", body: "{}")
            #expect(login.status == 200 && login.body == live["/login"]!.body)
        }
    }
}
