import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// The seed formats teams bring from other Swift mocking tools: Mock-Bundles (`mock.bundle`)
/// and stub folders (`mock.stubs`). Both become ordinary rules in registration order.
extension ScriptGeneration {
    /// `H.bundle(dir, name, handle_all, where)`: one rule serving the bundle folder.
    func hostBundle(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) {
            let dir = try stack.checkString(1, "bundle folder")
            let id = stack.string(at: 2) ?? "bundle \(dir)"
            let handleAll = stack.bool(at: 3)
            var location = stack.string(at: 4) ?? ""
            if location.hasSuffix(": ") { location.removeLast(2) }
            let load = bundleLoader()
            let bundle = try load(dir)
            bundle.files.forEach { depend(on: $0) }
            bundleDeclarations.append(.init(rule: id, path: dir, bundle: bundle, load: load))
            let bundles = engine.bundles
            let predicate = Predicate("a bundle entry\(handleAll ? " (handles all)" : "")") { req, _ in
                if handleAll || bundles.bundle(for: id)?.entry(for: req) != nil { return nil }
                return "bundle: no entry for \(req.method) ://\(req.host)\(req.port.map { ":\($0)" } ?? "")\(req.path)"
                    + (req.rawQuery.map { "?" + $0 } ?? "")
            }
            registered.append(Rule(id: id, method: nil, pattern: try RoutePattern("/*"), predicates: [predicate],
                                   location: location.isEmpty ? nil : location) { context in
                let current = bundles.bundle(for: id)
                if let entry = current?.entry(for: context.request) { return entry.response }
                guard handleAll else { return nil }
                return .text("no entry in the Mock-Bundle \(current?.directory.path ?? dir) for \(context.request.method) \(context.request.url)\n",
                             status: 501)
            })
        }
    }

    /// Loads a bundle folder given relative to the script (confined like fixtures).
    func bundleLoader() -> @Sendable (String) throws -> MockBundle {
        let base = baseDirectory
        let sandbox = self.sandbox
        return { path in
            let url: URL
            if let sandbox {
                // The folder (also one switched to with PUT /__moonmock/bundle), its bundle.json
                // and every file it names stay inside the script folder.
                do { url = URL(fileURLWithPath: try sandbox.resolve(path, what: "bundle folder")) } catch {
                    throw LuaError.host(String(describing: error))
                }
            } else {
                url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path)
            }
            do { return try MockBundle(directory: url, sandbox: sandbox) } catch { throw LuaError.host(String(describing: error)) }
        }
    }

    /// `H.stubs(dir, endpoints, delay, where)`: one rule per endpoint folder; at most one stub
    /// active per endpoint (none at first: requests fall through).
    func hostStubs(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) {
            let dir = try stack.checkString(1, "stubs folder")
            guard stack.isTable(at: 2) else { throw LuaError.host("endpoints must be a table of folder = \"METHOD /pattern\"") }
            var endpoints: [(String, String)] = []
            lua_pushnil(stack.L)
            while lua_next(stack.L, 2) != 0 {
                defer { stack.pop() }
                guard let name = stack.isString(at: -2) ? stack.string(at: -2) : nil, let pattern = stack.string(at: -1) else {
                    throw LuaError.host("endpoints must map folder names to \"METHOD /pattern\" strings")
                }
                endpoints.append((name, pattern))
            }
            if let delay = stack.number(at: 3) { engine.variants.stubDelayMilliseconds = delay }
            var location = stack.string(at: 4) ?? ""
            if location.hasSuffix(": ") { location.removeLast(2) }

            let root = URL(fileURLWithPath: try resolve(dir))
            let folder = try StubFolder(root: root, endpoints: endpoints.map(\.0), sandbox: sandbox)
            folder.files.forEach { depend(on: $0) }
            let variants = engine.variants
            for (name, spec) in endpoints.sorted(by: { $0.0 < $1.0 }) {
                let parts = spec.split(separator: " ", maxSplits: 1).map(String.init)
                let (method, patternText) = parts.count == 2 ? (parts[0], parts[1]) : (nil, parts.first ?? "/")
                let pattern: RoutePattern
                do { pattern = try RoutePattern(patternText) } catch { throw LuaError.host("endpoint \(name): \(error)") }
                let stubs = folder.stubs[name] ?? [:]
                variantDeclarations.append(.init(rule: name, names: stubs.keys.sorted(), defaultName: nil,
                                                 aliases: folder.aliases[name] ?? [:]))
                registered.append(Rule(id: name, method: method, pattern: pattern,
                                       location: location.isEmpty ? nil : location) { _ in
                    guard let active = variants.active(for: name), var response = stubs[active] else { return nil }
                    let delay = variants.stubDelayMilliseconds
                    if delay > 0 { response.delay = .fixed(delay) }
                    return response
                })
            }
        }
    }
}

/// A stubs folder read from disk: per endpoint, its stubs by file name (`ok.200.json`).
struct StubFolder {
    var stubs: [String: [String: MockResponse]] = [:]
    var aliases: [String: [String: String]] = [:]
    var files: [String] = []

    /// With a `sandbox`, every folder and stub file must lie inside it, symlinks resolved.
    init(root: URL, endpoints: [String], sandbox: FileConfinement? = nil) throws {
        let fm = FileManager.default
        func confine(_ path: String) throws {
            guard let sandbox else { return }
            do { try sandbox.check(path, label: "stub '\(path)'") } catch { throw LuaError.host(String(describing: error)) }
        }
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LuaError.host("stubs folder '\(root.path)' not found")
        }
        let entries = try fm.contentsOfDirectory(atPath: root.path).filter { !$0.hasPrefix(".") }.sorted()
        var rootStubs: [String: MockResponse] = [:]
        for entry in entries {
            let path = root.appendingPathComponent(entry).path
            _ = fm.fileExists(atPath: path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                guard endpoints.contains(entry) else {
                    throw LuaError.host("stubs folder '\(path)' is not one of the endpoints (\(endpoints.sorted().joined(separator: ", ")))")
                }
                continue
            }
            try confine(path)
            rootStubs[entry] = try Self.stub(path)
            files.append(path)
        }
        for endpoint in endpoints {
            var stubs = rootStubs
            let dir = root.appendingPathComponent(endpoint)
            if fm.fileExists(atPath: dir.path) { try confine(dir.path) }
            files.append(dir.path)
            for file in ((try? fm.contentsOfDirectory(atPath: dir.path)) ?? []).filter({ !$0.hasPrefix(".") }).sorted() {
                let path = dir.appendingPathComponent(file).path
                try confine(path)
                stubs[file] = try Self.stub(path)
                files.append(path)
            }
            stubs["timeout"] = .fault(.timeout)
            var aliases: [String: String] = [:]
            var ambiguous: Set<String> = []
            for name in stubs.keys where name != "timeout" {
                let short = String(name.split(separator: ".").first ?? "")
                if aliases[short] != nil { ambiguous.insert(short) } else { aliases[short] = name }
            }
            ambiguous.forEach { aliases[$0] = nil }
            self.stubs[endpoint] = stubs
            self.aliases[endpoint] = aliases
        }
    }

    /// Reads `NAME.STATUS[.EXT]`: the whole file is the body, the content type from the extension.
    static func stub(_ path: String) throws -> MockResponse {
        let name = (path as NSString).lastPathComponent
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty, let status = Int(parts[1]), (100...599).contains(status) else {
            throw LuaError.host("stub file '\(path)' does not follow NAME.STATUS[.EXT] (for example ok.200.json or error.500)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw LuaError.host("cannot read stub file '\(path)'") }
        var headers = HTTPHeaders()
        if parts.count > 2 { headers["Content-Type"] = MIMEType.forPath(name) }
        if !data.isEmpty { headers["Accept-Ranges"] = "bytes" }
        return MockResponse(status: status, headers: headers, body: [UInt8](data))
    }
}
