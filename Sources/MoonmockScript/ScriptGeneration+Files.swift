import Foundation
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Resolves `path` against the script's folder, refusing absolute paths, `..` and symlinks
    /// that lead outside it (unless `--unsafe`). Returns the absolute path.
    func resolve(_ path: String, in root: URL? = nil) throws -> String {
        let root = (root ?? baseDirectory).standardizedFileURL
        if options.unsafe {
            return path.hasPrefix("/") ? path : root.appendingPathComponent(path).standardizedFileURL.path
        }
        do { return try FileConfinement(root: root).resolve(path) } catch { throw LuaError.host(String(describing: error)) }
    }

    /// The script folder as a sandbox, or `nil` under `--unsafe`.
    var sandbox: FileConfinement? { options.unsafe ? nil : FileConfinement(root: baseDirectory) }

    /// Reads a fixture relative to the script folder and records it as a dependency.
    func readFile(_ path: String) throws -> [UInt8] {
        let absolute = try resolve(path)
        depend(on: absolute)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) else {
            let near = nearestFiles(to: path)
            throw LuaError.host("fixture '\(path)' not found in the script's folder (\(baseDirectory.path))"
                                + (near.isEmpty ? "" : "; nearest: " + near.joined(separator: ", ")))
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: absolute) else {
            throw LuaError.host("cannot read '\(path)'")
        }
        return Array(data)
    }

    /// `path` resolved in the script's folder, when there is a file there; else an error naming
    /// the folder and the nearest files.
    func existingFile(_ path: String) throws -> String {
        let absolute = try resolve(path)
        guard FileManager.default.fileExists(atPath: absolute) else {
            let near = nearestFiles(to: path)
            throw LuaError.host("'\(path)' not found in the script's folder (\(baseDirectory.path))"
                                + (near.isEmpty ? "" : "; nearest: " + near.joined(separator: ", ")))
        }
        return absolute
    }

    /// Up to three files of the script's folder whose relative paths are nearest to `path`.
    func nearestFiles(to path: String) -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: baseDirectory.path) else { return [] }
        var scored: [(distance: Int, path: String)] = []
        let limit = max(3, path.count / 3)
        var seen = 0
        while let next = walk.nextObject() as? String, seen < 5000 {
            seen += 1
            if next.hasPrefix(".") || next.contains("/.") { walk.skipDescendants(); continue }
            let d = EditDistance.between(path, next)
            if d <= limit { scored.append((d, next)) }
        }
        return scored.sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.path < $1.path }.prefix(3).map(\.path)
    }

    /// Compiles a template from inline text or from a file (a string without `{{` or a line
    /// break that ends in an extension is a path). Returns its id and content type.
    func compileTemplate(_ source: String) throws -> (Int, String) {
        if let id = templateIDs[source] { return (id, templateContentTypes[id]) }
        var text = source
        var contentType: String
        let looksLikePath = !source.contains("{{") && !source.contains("\n") && !source.contains(" ")
            && source.split(separator: "/").last?.contains(".") == true
        if looksLikePath {
            text = String(decoding: try readFile(source), as: UTF8.self)
            contentType = MIMEType.forPath(source)
        } else {
            let first = source.first { !$0.isWhitespace }
            contentType = first == "{" || first == "[" ? "application/json; charset=utf-8" : "text/plain; charset=utf-8"
        }
        let template: Template
        do { template = try Template(text) } catch { throw LuaError.host(String(describing: error)) }
        templates.append(template)
        templateContentTypes.append(contentType)
        let id = templates.count - 1
        templateIDs[source] = id
        return (id, contentType)
    }

    /// Finds `name.lua` (dots are folder separators) in the script folder, then in the library
    /// folders; returns its source and chunk name, and records it as a dependency.
    func findModule(_ name: String) throws -> ([UInt8], String) {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), !name.contains("..") else {
            throw LuaError.host("invalid module name '\(name)'")
        }
        let relative = name.replacingOccurrences(of: ".", with: "/") + ".lua"
        var tried: [String] = []
        let roots = [baseDirectory] + options.libraryPaths.map { URL(fileURLWithPath: $0, isDirectory: true) }
        for root in roots {
            guard let path = try? resolve(relative, in: root) else { continue }
            tried.append(path)
            if let data = FileManager.default.contents(atPath: path) {
                depend(on: path)
                return (Array(data), "@" + relative)
            }
            depend(on: path)   // so creating it later triggers a reload
        }
        throw LuaError.host("module '\(name)' not found; tried:\n\t" + tried.joined(separator: "\n\t"))
    }
}
