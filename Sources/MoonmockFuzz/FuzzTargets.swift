import CLua
import Foundation
import Moonmock
import MoonmockCore
import LuaBridge
@testable import MoonmockScript
@testable import MoonmockServer

/// The fuzz targets: each takes one input and checks what must hold for every input (no crash is
/// the least of it). `scripts/fuzz` runs them under libFuzzer with AddressSanitizer.
enum FuzzTargets {
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "http": http, "json": json, "lua-json": luaJSON, "template": template, "bundle": bundle,
        "stubs": stubNames, "routes": routes, "lua-pattern": luaPattern,
        "regex-lua": regexToLua, "openapi": openAPI, "har": har, "range": ranges, "websocket": websocket,
        "store": store, "schema": schema, "h2": http2, "proto": proto,
    ]

    /// The request parser fed as a byte stream: the first byte picks where the input is cut into
    /// reads; every head is parsed as the loop parses it (again after each read until whole), its
    /// body framed by Content-Length or chunked, and the next request follows (pipelining).
    /// A head never completes at a different length than a longer prefix says, and a chunked body
    /// decodes the same whatever the cuts.
    static func http(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let bytes = Array(input.dropFirst())
        let step = Int(first % 32) + 1
        var offset = 0
        var recent = RecentStrings()
        while offset < bytes.count {
            let rest = Array(bytes[offset...])
            let whole = rest.withUnsafeBytes { RequestHead.parse($0, limit: 16 * 1024, recent: &recent) }
            guard case .complete(let head, let length) = whole else { return }
            // Every shorter prefix that reaches a verdict agrees on the head's length.
            var cut = step
            while cut < length {
                if case .complete(_, let other) = Array(rest.prefix(cut)).withUnsafeBytes({ RequestHead.parse($0, limit: 16 * 1024) }) {
                    precondition(other == length, "a prefix completed at \(other), the whole at \(length)")
                }
                cut += step
            }
            var used = length
            if head.chunked {
                var once = ChunkedBody(limit: 1 << 20), body: [UInt8] = []
                let result = rest[length...].withUnsafeBytes { once.feed($0, into: &body) }
                var sliced = ChunkedBody(limit: 1 << 20), slicedBody: [UInt8] = []
                var at = length, slicedResult = ChunkedBody.Result.needMore
                while at < rest.count, slicedResult == .needMore {
                    let end = min(rest.count, at + step)
                    slicedResult = rest[at..<end].withUnsafeBytes { sliced.feed($0, into: &slicedBody) }
                    if case .done(let n) = slicedResult { slicedResult = .done(consumed: at - length + n) }
                    at = end
                }
                precondition(result == slicedResult, "chunked: \(result) whole, \(slicedResult) in slices of \(step)")
                if case .done = result { precondition(body == slicedBody) }
                guard case .done(let n) = result else { return }
                used += n
            } else if let n = head.contentLength {
                used += n
            }
            offset += used
        }
    }

    /// JSON: whatever parses encodes to text that parses to the same value.
    static func json(_ input: [UInt8]) {
        guard let value = try? JSONValue(parsing: input) else { return }
        let text = value.encoded()
        guard let again = try? JSONValue(parsing: text) else { preconditionFailure("encoded JSON does not parse: \(text)") }
        precondition(again == value, "round trip changed the value")
        precondition(again.encoded() == text, "encoding is not deterministic")
    }

    /// The JSON decoder into Lua and the encoder back, through a script: what decodes must
    /// encode to the value the host's parser reads.
    static let engine: Engine = {
        let engine = Engine()
        try! engine.loadScript(source: #"mock.post("/j", function(req) return mock.text(mock.json.encode(req.json)) end)"#)
        return engine
    }()
    static func luaJSON(_ input: [UInt8]) {
        // JSON text is UTF-8. (With invalid bytes in strings the host's parser repairs them and
        // Lua keeps them, so two keys that differ only there are one key to the host and two to
        // Lua: a known difference, left out here.)
        guard String(bytes: input, encoding: .utf8) != nil, let expected = try? JSONValue(parsing: input) else { return }
        let exchange = engine.handle(MockRequest(method: "POST", url: "http://f.test/j", headers: ["Content-Type": "application/json"], body: input))
        guard exchange.response.status == 200 else { return }   // nesting past Lua's limits, say: an error, not a crash
        guard let got = try? JSONValue(parsing: exchange.response.body) else {
            preconditionFailure("Lua encoded text that does not parse: \(String(decoding: exchange.response.body, as: UTF8.self))")
        }
        precondition(equivalent(got, expected), "Lua round trip: \(got) for \(expected)")
    }

    /// Equal, where Lua may not tell apart an empty object from an empty array, nor keep -0.0 or
    /// the integral type of a float with no fraction.
    static func equivalent(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equivalent($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { equivalent(v, $0) } ?? false }
        case (.array(let x), .object(let y)), (.object(let y), .array(let x)): return x.isEmpty && y.isEmpty
        case (.integer(let x), .double(let y)), (.double(let y), .integer(let x)): return Double(x) == y
        case (.double(let x), .double(let y)): return x == y || (x.isNaN && y.isNaN)
        default: return a == b
        }
    }

    /// Templates: parse, then render against a request; never a crash.
    static func template(_ input: [UInt8]) {
        guard let t = try? Template(String(decoding: input, as: UTF8.self)) else { return }
        let request = MockRequest(method: "POST", url: "http://f.test/o/1?q=a", headers: ["X-A": "1"], body: Array(#"{"a":[1,{"b":"c"}]}"#.utf8))
        for escape in [false, true] {
            _ = try? t.render(request: request, params: ["id": "1"], state: StateStore(), environment: .fixed(now: 0, seed: 1), escapeJSON: escape)
        }
    }

    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: url.appendingPathComponent("b"), withIntermediateDirectories: true)
        try? Data("x".utf8).write(to: url.appendingPathComponent("b/x.txt"))
        return url
    }()

    /// `bundle.json` as written: loaded (or refused with a message), never a crash, never a file
    /// outside the folder.
    static func bundle(_ input: [UInt8]) {
        let dir = folder.appendingPathComponent("b")
        try? Data(input).write(to: dir.appendingPathComponent("bundle.json"))
        guard let bundle = try? MockBundle(directory: dir, sandbox: FileConfinement(root: folder)) else { return }
        for entry in bundle.entries {
            if let file = entry.file { precondition(!file.hasPrefix("/") && !file.split(separator: "/").contains("..")) }
            _ = bundle.entry(for: MockRequest(method: entry.method, url: "http://\(entry.host)\(entry.path)"))
        }
    }

    /// Stub file names (`name.status.ext`): a response or a clear refusal.
    static func stubNames(_ input: [UInt8]) {
        let name = String(decoding: input.prefix(200), as: UTF8.self)
        guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", !name.contains("\0") else { return }
        let path = folder.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)) else { return }
        defer { try? FileManager.default.removeItem(atPath: path) }
        if let response = try? StubFolder.stub(path) { precondition((100...599).contains(response.status)) }
    }

    /// Route patterns and URI templates: parse, then match against a path made from the input.
    static func routes(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1).map(String.init)
        let pattern = parts.first ?? "", path = parts.count > 1 ? parts[1] : "/a/b"
        let request = MockRequest(method: "GET", url: "http://f.test" + (path.hasPrefix("/") ? path : "/" + path))
        if let route = try? RoutePattern(pattern) { _ = route.match(request) }
        _ = URITemplate(pattern).match(request)
    }

    /// The pattern guard against Lua itself: a pattern it calls well formed is one Lua accepts
    /// (on a small subject, where the budget is no concern), and it never crashes on any input.
    /// One thread runs a fuzzer: the VM is only ever touched from it.
    nonisolated(unsafe) static let vm: LuaVM = try! LuaVM(limits: LuaLimits(instructions: 0, memoryBytes: 64 << 20))
    static func luaPattern(_ input: [UInt8]) {
        let split = input.firstIndex(of: 0) ?? input.count
        let pattern = Array(input[..<split]), subject = split < input.count ? Array(input[(split + 1)...]) : []
        let verdict = subject.withUnsafeBufferPointer { s in
            pattern.withUnsafeBufferPointer { p in
                s.withMemoryRebound(to: CChar.self) { s in
                    p.withMemoryRebound(to: CChar.self) { p in
                        mm_pattern_within(s.baseAddress, s.count, p.baseAddress, p.count, 0, Int32(MM_PATTERN_FIRST), -1, 2_000_000)
                    }
                }
            }
        }
        guard verdict == Int32(MM_PATTERN_OK), subject.count < 64 else { return }
        let L = vm.state
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        lua_getglobal(L, "string")
        lua_getfield(L, -1, "find")
        subject.withUnsafeBufferPointer { b in b.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) } }
        pattern.withUnsafeBufferPointer { b in b.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) } }
        let status = mm_pcall(L, 2, 1, 0)
        if status != 0 {
            let message = String(cString: lua_tolstring(L, -1, nil))
            precondition(!message.contains("malformed") && !message.contains("missing") && !message.contains("invalid"),
                         "the guard passed a pattern Lua refuses: \(message)")
        }
    }
}
