// Two ways in: libFuzzer's (built with -sanitize=fuzzer and -D FUZZING, see scripts/fuzz; the
// target comes from MOONMOCK_FUZZ_TARGET), or a replay of files (the seed corpora in the test
// suite): `MoonmockFuzz TARGET FILE_OR_FOLDER...` runs each file through the target once.
import Foundation

#if FUZZING
nonisolated(unsafe) private let target: ([UInt8]) -> Void = {
    let name = ProcessInfo.processInfo.environment["MOONMOCK_FUZZ_TARGET"] ?? "http"
    guard let t = FuzzTargets.all[name] else { fatalError("MOONMOCK_FUZZ_TARGET: no target '\(name)' (\(FuzzTargets.all.keys.sorted()))") }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    target(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver, for an executable whose `main` SwiftPM names itself.
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
               _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// SwiftPM links an executable's `main` to this symbol: it hands over to libFuzzer.
@_cdecl("MoonmockFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var vector = argv
    return runDriver(&count, &vector, fuzzOne)
}
#else
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTargets.all[name] else {
            FileHandle.standardError.write(Data("usage: MoonmockFuzz TARGET FILE_OR_FOLDER...  (targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", ")))\n".utf8))
            exit(64)
        }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 } : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target(Array(data))
                count += 1
            }
        }
        print("\(name): \(count) inputs, no failure")
    }
}
#endif
