import Foundation
import Moonmock
import MoonmockCore

extension MutantInjector {
    /// Logs requests — every one, or those whose whole URL is one of `urls` — to `callback`,
    /// else to standard error. While logging, requests without a mock are logged too (and then
    /// sent to the network by the interceptor itself).
    ///
    /// ```swift
    /// MutantInjector.setRequestLogMode(.verbose) { info in print(info.method, info.url) }
    /// MutantInjector.setRequestLogMode(.compact, for: ["https://api.example.com/login"])
    /// ```
    public class func setRequestLogMode(_ mode: RequestLogMode, for urls: [String] = [], callback: (@Sendable (RequestLogInfo) -> Void)? = nil) {
        registry.withLock { $0.logMode = mode }
        moonmock.unmatchedPolicy = mode == .none ? .leaveUnclaimed : .passThrough
        guard mode != .none else {
            moonmock.logging = .none
            return
        }
        let wanted = Set(urls.map(normalized))
        moonmock.logging = .callback(mode == .verbose ? .verbose : .compact) { entry in
            if !wanted.isEmpty && !wanted.contains(normalized(entry.url)) { return }
            var headers: [String: String]?
            if mode == .verbose {
                headers = [:]
                for field in entry.headers { headers?[field.name] = field.value }
            }
            let info = RequestLogInfo(method: entry.method, url: entry.url, headers: headers, body: entry.body.isEmpty ? nil : entry.body)
            if let callback { callback(info) } else { FileHandle.standardError.write(Data((describe(info) + "\n").utf8)) }
        }
    }

    /// `[MutantInjector] GET https://…`, then headers and body lines.
    static func describe(_ info: RequestLogInfo) -> String {
        var text = "[MutantInjector] \(info.method) \(info.url)"
        for (name, value) in (info.headers ?? [:]).sorted(by: { $0.key < $1.key }) { text += "\n    \(name): \(value)" }
        if let body = info.body { text += "\n    " + String(decoding: body.prefix(2048), as: UTF8.self) }
        return text
    }
}

extension MutantInjector {
    /// The file a mock's source names: a file URL as it is; a name (`.json` added) in
    /// ``mockFilesDirectory``, then in the test bundle's resources, then the main bundle.
    static func locate(_ source: Source) -> URL? {
        switch source {
        case .file(let url): return url
        case .filename(let name):
            let file = name.hasSuffix(".json") ? name : name + ".json"
            var folders: [URL] = []
            if let directory = mockFilesDirectory { folders.append(directory) }
            folders += resourceFolders()
            for folder in folders {
                let candidate = folder.appendingPathComponent(file)
                if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            }
            return nil
        }
    }

    /// SwiftPM's resource bundles beside the running binary (`*.resources`, `*.bundle`) and
    /// the folders right inside them, then the bundles Foundation knows.
    static func resourceFolders() -> [URL] {
        let fm = FileManager.default
        let binary = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        var folders: [URL] = []
        for base in [binary, Bundle.main.bundleURL.deletingLastPathComponent()] {
            for entry in (try? fm.contentsOfDirectory(atPath: base.path))?.sorted() ?? []
            where entry.hasSuffix(".resources") || entry.hasSuffix(".bundle") {
                let bundle = base.appendingPathComponent(entry)
                folders.append(bundle)
                let resources = bundle.appendingPathComponent("Contents/Resources")
                for root in [bundle, resources] {
                    for sub in (try? fm.contentsOfDirectory(atPath: root.path))?.sorted() ?? [] {
                        var isDirectory: ObjCBool = false
                        let url = root.appendingPathComponent(sub)
                        if fm.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue { folders.append(url) }
                    }
                }
            }
        }
        folders += Bundle.allBundles.compactMap(\.resourceURL) + [Bundle.main.resourceURL].compactMap { $0 }
        return folders
    }
}
