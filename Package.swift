// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Moonmock",
    products: [
        .library(name: "Moonmock", targets: ["Moonmock"]),
        .library(name: "MoonmockCore", targets: ["MoonmockCore"]),
        .library(name: "MoonmockServer", targets: ["MoonmockServer"]),
        .library(name: "MoonmockScript", targets: ["MoonmockScript"]),
        .executable(name: "moonmock", targets: ["moonmock"]),
        // Migration kits: each seed library's API shape over Moonmock's public API.
        .library(name: "MoonmockMockingjay", targets: ["MoonmockMockingjay"]),
        .library(name: "MoonmockMutantInjector", targets: ["MoonmockMutantInjector"]),
        .library(name: "MoonmockMockingBird", targets: ["MoonmockMockingBird"]),
        .library(name: "MoonmockStubber", targets: ["MoonmockStubber"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLua",
            pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"])]
        ),
        // OpenSSL for HTTPS on the server's own HTTP/1.1 layer (non-blocking sessions in the
        // epoll loops) and the local certificate authority of `--tls self-signed`.
        .target(name: "COpenSSL", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // zlib, Brotli and Zstandard decoders: the in-process door takes a response's content
        // codings off its body, as URLSession's libcurl does for the socket door.
        .systemLibrary(
            name: "CCompression",
            providers: [.apt(["zlib1g-dev", "libbrotli-dev", "libzstd-dev"])]
        ),
        // Headers only (epoll, eventfd, TCP options) for the server's own HTTP/1.1 layer.
        .systemLibrary(name: "CLinuxIO"),
        // The thread that arms a Lua call's instruction budget once the call runs long.
        .target(name: "CWatchdog"),
        // A JSON object's member read without building the document (GraphQL's operationName),
        // and the scan of string text that CLua's JSON decoder shares with it.
        .systemLibrary(name: "CJSONSkim"),
        // CJSONSkim too: CLua's json.h includes it, so a module importing CLua needs its module map.
        .target(name: "LuaBridge", dependencies: ["CLua", "CWatchdog", "CJSONSkim"]),
        .target(name: "MoonmockCore", dependencies: ["CJSONSkim"]),
        .target(name: "MoonmockScript", dependencies: ["LuaBridge", "MoonmockCore"]),
        .target(name: "Moonmock", dependencies: ["MoonmockCore", "MoonmockScript", "MoonmockProxy", "CCompression"]),
        .target(name: "MoonmockServer", dependencies: ["MoonmockCore", "MoonmockScript", "MoonmockProxy", "MoonmockImport", "COpenSSL", "CLinuxIO"]),
        // libcurl for mock.proxy's upstream requests (a C function per request: curl_easy_setopt is variadic).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // mock.proxy on the server: upstream requests on a pool of threads, each keeping its connections.
        .target(name: "MoonmockProxy", dependencies: ["MoonmockCore", "CCurl"]),
        // Exchanges (recorded, or read from HAR and other formats) to an editable mocks.lua: the one ScriptWriter.
        // libyaml for OpenAPI documents written in YAML (the document loader, aliases resolved).
        .systemLibrary(name: "CYAML", providers: [.apt(["libyaml-dev"])]),
        .target(name: "MoonmockImport", dependencies: ["MoonmockCore", "CYAML"]),
        // hiredis for `moonmock serve --store redis://`: replicas sharing state, counters, switches and the journal.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(name: "MoonmockRedis", dependencies: ["MoonmockCore", "CHiredis"]),
        // Migration kits (docs/migrating.md): a seed's README code compiles with only its import changed.
        .target(name: "MoonmockMockingjay", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockMutantInjector", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockMockingBird", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockStubber", dependencies: ["Moonmock", "MoonmockCore"]),
        .executableTarget(name: "moonmock", dependencies: ["MoonmockCore", "MoonmockScript", "MoonmockServer", "MoonmockImport", "MoonmockRedis"]),
        // Fuzz targets (scripts/fuzz runs them under libFuzzer; the test suite replays their corpora).
        .executableTarget(name: "MoonmockFuzz", dependencies: ["Moonmock", "MoonmockCore", "MoonmockScript", "MoonmockServer", "MoonmockImport", "MoonmockRedis", "LuaBridge", "CLua"]),
        .executableTarget(name: "MoonmockBench", dependencies: ["Moonmock", "MoonmockCore", "MoonmockScript"]),
        // Test support: Subprocess, a posix_spawn child in Process's shape (Foundation's
        // Process.run is not safe while other threads open descriptors).
        .target(name: "MoonmockTestSupport", dependencies: ["CLinuxIO"], path: "Tests/MoonmockTestSupport"),
        .testTarget(name: "LuaBridgeTests", dependencies: ["LuaBridge"]),
        .testTarget(name: "MoonmockCoreTests", dependencies: ["MoonmockCore"]),
        .testTarget(name: "MoonmockRedisTests", dependencies: ["MoonmockRedis", "MoonmockCore"]),
        .testTarget(name: "MoonmockScriptTests", dependencies: ["MoonmockScript", "MoonmockCore"]),
        .testTarget(name: "MoonmockTests", dependencies: ["Moonmock", "MoonmockCore", "MoonmockScript", "MoonmockTestSupport"]),
        // One test target per migration kit: the seed's README example, compiled with only the
        // import changed, and the seed's behaviours through real sessions.
        .testTarget(name: "MoonmockMockingjayTests", dependencies: ["MoonmockMockingjay", "MoonmockTestSupport"], exclude: ["fixture.json"]),
        .testTarget(name: "MoonmockMutantInjectorTests", dependencies: ["MoonmockMutantInjector", "MoonmockTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "MoonmockMockingBirdTests", dependencies: ["MoonmockMockingBird", "MoonmockTestSupport"],
                    resources: [.copy("bundles")]),
        .testTarget(name: "MoonmockStubberTests", dependencies: ["MoonmockStubber", "MoonmockTestSupport"],
                    resources: [.copy("Stubs")]),
        .testTarget(name: "MoonmockServerTests", dependencies: ["MoonmockServer", "MoonmockCore", "MoonmockScript", "MoonmockProxy", "LuaBridge", "COpenSSL", "MoonmockTestSupport"]),
        .testTarget(name: "MoonmockCLITests", dependencies: ["moonmock", "MoonmockFuzz", "MoonmockTestSupport"]),
        .testTarget(name: "MoonmockImportTests", dependencies: ["MoonmockImport", "MoonmockCore", "MoonmockScript"]),
        // The same requests through both front doors: in-process and over a socket.
        .testTarget(name: "MoonmockParityTests", dependencies: ["Moonmock", "MoonmockServer", "MoonmockCore"]),
    ]
)
