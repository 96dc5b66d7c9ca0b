import Foundation
import MoonmockProto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.proto` files (and descriptor sets) as a schema, for `moonmock convert proto`.
///
/// ```swift
/// let schema = try ProtoFiles.load(["/abs/api.proto"], includes: [])
/// ```
public enum ProtoFiles {
    public static func load(_ files: [String], includes: [String]) throws -> ProtoSchema {
        try ProtoLoader.load(files, includes: includes)
    }
}

/// `mock.proto`: `.proto` files compiled by `protoc --descriptor_set_out --include_imports`
/// (`$PROTOC`, else `protoc` on the PATH), or descriptor sets (`.binpb`, `.pb`, `.desc`) read
/// as they are.
enum ProtoLoader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let descriptorExtensions: Set<String> = ["binpb", "pb", "desc", "protoset"]

    /// The schema of `files` (absolute paths), with `includes` as protoc's import folders (the
    /// folder of each file is one too).
    static func load(_ files: [String], includes: [String]) throws -> ProtoSchema {
        var schema = ProtoSchema()
        var sources: [String] = []
        for file in files {
            if descriptorExtensions.contains((file as NSString).pathExtension.lowercased()) {
                guard let data = FileManager.default.contents(atPath: file) else { throw Failure(description: "cannot read \(file)") }
                do { schema.merge(try ProtoSchema(descriptorSet: Array(data))) } catch {
                    throw Failure(description: "\((file as NSString).lastPathComponent) is not a descriptor set: \(error)")
                }
            } else {
                sources.append(file)
            }
        }
        if !sources.isEmpty { schema.merge(try compile(sources, includes: includes)) }
        return schema
    }

    private static func compile(_ files: [String], includes: [String]) throws -> ProtoSchema {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-protoc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("set.binpb").path, errors = folder.appendingPathComponent("stderr.txt").path
        var folders = includes
        for file in files where !folders.contains((file as NSString).deletingLastPathComponent) {
            folders.append((file as NSString).deletingLastPathComponent)
        }
        // Each file named relative to the include folder it is under (protoc requires it).
        let names = files.map { file -> String in
            for dir in folders where file.hasPrefix(dir.hasSuffix("/") ? dir : dir + "/") {
                return String(file.dropFirst(dir.hasSuffix("/") ? dir.count : dir.count + 1))
            }
            return file
        }
        let protoc = ProcessInfo.processInfo.environment["PROTOC"] ?? "protoc"
        let arguments = [protoc, "--descriptor_set_out=\(out)", "--include_imports", "--include_source_info=false"]
            + folders.map { "-I\($0)" } + names
        let status = try run(arguments, stderr: errors)
        let message = (try? String(contentsOfFile: errors, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard status == 0, let data = FileManager.default.contents(atPath: out) else {
            throw Failure(description: message.isEmpty ? "protoc failed (exit \(status))" : message)
        }
        do { return try ProtoSchema(descriptorSet: Array(data)) } catch {
            throw Failure(description: "protoc wrote a descriptor set this cannot read: \(error)")
        }
    }

    /// Runs `arguments` (the first found on the PATH) with stderr into a file; its exit status.
    private static func run(_ arguments: [String], stderr path: String) throws -> Int32 {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        // No child processes on these platforms: only descriptor sets load there.
        throw Failure(description: "\(arguments.last ?? "a .proto file") needs protoc, which cannot run on this platform: give a descriptor set (protoc --descriptor_set_out=api.binpb --include_imports api.proto)")
        #else
        // posix_spawn_file_actions_t is a struct in glibc and an opaque pointer on Darwin.
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        if rc == ENOENT {
            throw Failure(description: "\(arguments[0]) was not found on the PATH: install it (Debian: apt-get install protobuf-compiler; macOS: brew install protobuf), set PROTOC, or give a descriptor set (.binpb)")
        }
        guard rc == 0 else { throw Failure(description: "cannot run \(arguments[0]): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS are macros: the exit status is bits 8…15 when the low 7 are 0.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        #endif
    }
}
