import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A TCP connection to 127.0.0.1:`port`, or -1.
func rawConnect(_ port: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    if rc != 0 { close(fd); return -1 }
    return fd
}

/// Runs blocking `work` on a thread of its own: blocking on the cooperative pool (two threads on
/// a two-core machine) would hold up every other test's tasks.
func cliThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in Thread { continuation.resume(returning: work()) }.start() }
}

/// Starts `moonmock serve ARGUMENTS` in the package root and reads its standard output until
/// `marker` appears (or 20 s pass): the process, its output pipe, and what it printed so far.
func launchServe(_ arguments: [String], environment extra: [String: String] = [:], until marker: String) throws -> (Subprocess, Pipe, String) {
    let process = Subprocess()
    process.executableURL = CLIRunner.binary
    process.arguments = ["serve"] + arguments
    process.currentDirectoryURL = CLIRunner.packageRoot
    if !extra.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 } }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    var text = ""
    let deadline = Date().addingTimeInterval(20)
    while !text.contains(marker), Date() < deadline {
        let data = out.fileHandleForReading.availableData
        if data.isEmpty { break }
        text += String(decoding: data, as: UTF8.self)
    }
    return (process, out, text)
}

/// `CLIRunner.run` on a thread of its own (see ``cliThread(_:)``): a test that waits for the
/// binary must not hold one of the cooperative pool's few threads while it does.
func runCLI(_ arguments: [String], in directory: URL = CLIRunner.packageRoot, input: String? = nil,
            environment: [String: String] = [:]) async throws -> CLIRunner.Result {
    try await cliThread { Result { try CLIRunner.run(arguments, in: directory, input: input, environment: environment) } }.get()
}
