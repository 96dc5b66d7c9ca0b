// swift-tools-version:6.0
import PackageDescription

// Lua: Apple platforms build Lua 5.4.8 from its own sources (Sources/CLuaVendored, a third-party
// folder: iOS has no system Lua). Linux links Debian's liblua5.4 (pkg-config lua5.4) unless the
// package is built with MOONMOCK_LUA=vendored, which builds the same sources Apple does.
// (The manifest runs on the host: an iOS build happens on a Mac, so it takes the vendored copy.)
#if os(Linux)
let vendoredLua = Context.environment["MOONMOCK_LUA"] == "vendored"
#else
let vendoredLua = true
#endif

let lua: Target = vendoredLua
    ? .target(
        name: "CLua",
        dependencies: ["CJSONSkim"],
        path: "Sources/CLuaVendored",
        exclude: ["third-party/lua-5.4.8/README.md", "third-party/lua-5.4.8/LICENSE"],
        sources: ["third-party/lua-5.4.8"],
        publicHeadersPath: "include",
        cSettings: [
            // Debian builds its liblua5.4 with the 5.3 compatibility functions (math.pow, ...): the same Lua on every platform.
            .define("LUA_COMPAT_5_3"),
            .define("LUA_USE_LINUX", .when(platforms: [.linux])),
            .define("LUA_USE_MACOSX", .when(platforms: [.macOS])),
            .define("LUA_USE_IOS", .when(platforms: [.iOS, .tvOS, .watchOS, .visionOS, .macCatalyst])),
        ],
        linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux])), .linkedLibrary("dl", .when(platforms: [.linux]))]
    )
    : .systemLibrary(name: "CLua", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"]), .brew(["lua@5.4"])])

// libyaml, the same way: Apple platforms (and Linux with MOONMOCK_YAML=vendored) build 0.2.5 from
// its own sources (Sources/CYAMLVendored, a third-party folder); Linux links Debian's libyaml.
#if os(Linux)
let vendoredYAML = Context.environment["MOONMOCK_YAML"] == "vendored"
#else
let vendoredYAML = true
#endif

let yaml: Target = vendoredYAML
    ? .target(
        name: "CYAML",
        path: "Sources/CYAMLVendored",
        exclude: ["third-party/libyaml-0.2.5/README.md", "third-party/libyaml-0.2.5/License"],
        sources: ["third-party/libyaml-0.2.5/src"],
        publicHeadersPath: "include",
        cSettings: [
            // What libyaml's own build (config.h) defines; a static library's declarations.
            .define("YAML_VERSION_MAJOR", to: "0"), .define("YAML_VERSION_MINOR", to: "2"), .define("YAML_VERSION_PATCH", to: "5"),
            .define("YAML_VERSION_STRING", to: "\"0.2.5\""), .define("YAML_DECLARE_STATIC"),
            .headerSearchPath("third-party/libyaml-0.2.5/include"),
        ]
    )
    : .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])])

/// The platforms where a C library the library products can do without exists as a system library.
let linuxOnly = TargetDependencyCondition.when(platforms: [Platform.linux])

let package = Package(
    name: "Moonmock",
    // Synchronization's Mutex and Atomic need macOS 15 / iOS 18: Locked and AtomicCounter have
    // a Darwin backend of their own (os_unfair_lock) so that apps with older floors can adopt it.
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
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
        // The server's admin API from Swift (XCUITest drives the app in another process): Foundation only.
        .library(name: "MoonmockClient", targets: ["MoonmockClient"]),
    ],
    targets: [
        lua,
        // OpenSSL for HTTPS on the server's own HTTP/1.1 layer (non-blocking sessions in the
        // epoll loops) and the local certificate authority of `--tls self-signed`.
        .target(name: "COpenSSL", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // zlib's inflate (gzip, deflate): in every SDK, iOS's included.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Brotli and Zstandard decoders (Linux: URLSession's libcurl decodes them, so the
        // in-process door does too). Apple platforms decode Brotli with the Compression framework.
        .systemLibrary(
            name: "CCompression",
            providers: [.apt(["libbrotli-dev", "libzstd-dev"])]
        ),
        // Linux backend: headers only (epoll, eventfd, accept4, SIOCOUTQ, TCP options) for the
        // server's own HTTP/1.1 layer and the tests' posix_spawn. Darwin's calls come with Darwin.
        .systemLibrary(name: "CLinuxIO"),
        // nghttp2: the server's HTTP/2 framing, fed by the event loops (Linux: Debian's
        // libnghttp2-dev; macOS: Homebrew's nghttp2). The library products never link it.
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"]), .brew(["nghttp2"])]),
        // The thread that arms a Lua call's instruction budget once the call runs long.
        .target(name: "CWatchdog"),
        // A JSON object's member read without building the document (GraphQL's operationName),
        // and the scan of string text that CLua's JSON decoder shares with it.
        .systemLibrary(name: "CJSONSkim"),
        // CJSONSkim too: CLua's json.h includes it, so a module importing CLua needs its module map.
        .target(name: "LuaBridge", dependencies: ["CLua", "CWatchdog", "CJSONSkim"]),
        .target(name: "MoonmockCore", dependencies: ["CJSONSkim"]),
        .target(name: "MoonmockClient"),
        // JSON Schema (drafts 2020-12, 2019-09, 7, 6, 4, OpenAPI 3.0's dialect), written here, no I/O.
        .target(name: "MoonmockSchema", dependencies: ["MoonmockCore"]),
        // Protocol Buffers: descriptor sets read, messages encoded and decoded as JSON values
        // (proto3 JSON mapping), written here, no I/O.
        .target(name: "MoonmockProto", dependencies: ["MoonmockCore"]),
        .target(name: "MoonmockScript", dependencies: ["LuaBridge", "MoonmockCore", "MoonmockContract", "MoonmockSchema", "MoonmockProto", "MoonmockCodings"]),
        // The library's closure fits iOS: libcurl (mock.proxy's insecure upstreams) and Brotli/zstd
        // on Linux only; Apple platforms use a URLSession and the Compression framework.
        .target(name: "Moonmock", dependencies: [
            "MoonmockCore", "MoonmockScript", "MoonmockCodings",
            .target(name: "MoonmockProxy", condition: linuxOnly),
        ]),
        // Content codings undone (gzip, deflate: zlib; br, zstd: Debian's libraries on Linux,
        // Compression's Brotli on Apple platforms), for the in-process door and the recorder.
        .target(name: "MoonmockCodings", dependencies: ["MoonmockCore", "CZlib", .target(name: "CCompression", condition: linuxOnly)]),
        .target(name: "MoonmockServer", dependencies: [
            "MoonmockCore", "MoonmockScript", "MoonmockProxy", "MoonmockImport", "MoonmockCodings", "COpenSSL", "CNghttp2",
            .target(name: "CLinuxIO", condition: linuxOnly),
        ], resources: [
            // The dashboard's page as files, embedded in the binary (Dashboard.swift assembles it).
            .embedInCode("Dashboard/index.html"), .embedInCode("Dashboard/dashboard.css"), .embedInCode("Dashboard/core.js"),
            .embedInCode("Dashboard/requests.js"), .embedInCode("Dashboard/inspector.js"), .embedInCode("Dashboard/panels.js"),
            // docs/language.md (a link to it), the MCP server's language resource.
            .embedInCode("MCP/language.md"),
        ]),
        // libcurl for mock.proxy's upstream requests (a C function per request: curl_easy_setopt is variadic).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // mock.proxy on the server: upstream requests on a pool of threads, each keeping its connections.
        .target(name: "MoonmockProxy", dependencies: ["MoonmockCore", "CCurl"]),
        // Exchanges (recorded, or read from HAR and other formats) to an editable mocks.lua: the one ScriptWriter.
        // libyaml for OpenAPI documents written in YAML (the document loader, aliases resolved).
        yaml,
        .target(name: "MoonmockYAML", dependencies: ["MoonmockCore", "CYAML"]),
        .target(name: "MoonmockImport", dependencies: ["MoonmockCore", "MoonmockCodings", "MoonmockYAML", "MoonmockContract"]),
        // OpenAPI specs kept (`--spec`, `mock.spec`, `mock.openapi`): requests and answers
        // checked against them, in YAML or JSON on every platform.
        .target(name: "MoonmockContract", dependencies: ["MoonmockCore", "MoonmockSchema", "MoonmockYAML"]),
        // hiredis for `moonmock serve --store redis://`: replicas sharing state, counters, switches and the journal.
        // (No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which the Glibc module was not built with.)
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]),
        .target(name: "MoonmockRedis", dependencies: ["MoonmockCore", "CHiredis"]),
        // Migration kits (docs/migrating.md): a seed's README code compiles with only its import changed.
        .target(name: "MoonmockMockingjay", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockMutantInjector", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockMockingBird", dependencies: ["Moonmock", "MoonmockCore"]),
        .target(name: "MoonmockStubber", dependencies: ["Moonmock", "MoonmockCore"]),
        // OpenTelemetry traces exported over OTLP/HTTP (protobuf or JSON) from a thread of their own,
        // configured by the standard OTEL_* variables; any OutboundClient carries the exports.
        .target(name: "MoonmockTelemetry", dependencies: ["MoonmockCore", "MoonmockProto", "MoonmockCodings"]),
        .executableTarget(name: "moonmock", dependencies: ["MoonmockCore", "MoonmockScript", "MoonmockServer", "MoonmockImport", "MoonmockRedis",
                                                          "MoonmockProxy", "MoonmockSchema", "MoonmockYAML", "MoonmockContract", "MoonmockProto",
                                                          "MoonmockTelemetry"]),
        // Fuzz targets (scripts/fuzz runs them under libFuzzer; the test suite replays their corpora).
        .executableTarget(name: "MoonmockFuzz", dependencies: ["Moonmock", "MoonmockCore", "MoonmockProto", "MoonmockScript", "MoonmockServer", "MoonmockImport", "MoonmockRedis", "MoonmockSchema", "LuaBridge", "CLua"]),
        .executableTarget(name: "MoonmockBench", dependencies: ["Moonmock", "MoonmockCore", "MoonmockScript", "MoonmockSchema"]),
        // Test support the library tests share (portable: a loopback server, session helpers).
        .target(name: "MoonmockTestSupport", path: "Tests/MoonmockTestSupport"),
        // Server and CLI tests only: Subprocess, a posix_spawn child in Process's shape
        // (Foundation's Process.run is not safe while other threads open descriptors).
        .target(name: "MoonmockProcessSupport", dependencies: [.target(name: "CLinuxIO", condition: linuxOnly)],
                path: "Tests/MoonmockProcessSupport"),
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
        .testTarget(name: "MoonmockServerTests", dependencies: ["MoonmockServer", "MoonmockCore", "MoonmockScript", "MoonmockProxy", "LuaBridge", "COpenSSL", "MoonmockTestSupport", "MoonmockProcessSupport"]),
        .testTarget(name: "MoonmockSchemaTests", dependencies: ["MoonmockSchema", "MoonmockCore"]),
        .testTarget(name: "MoonmockTelemetryTests", dependencies: ["MoonmockTelemetry", "MoonmockCodings", "MoonmockCore"]),
        .testTarget(name: "MoonmockProtoTests", dependencies: ["MoonmockProto", "MoonmockCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "MoonmockContractTests", dependencies: ["MoonmockContract", "MoonmockScript", "MoonmockCore"]),
        .testTarget(name: "MoonmockClientTests", dependencies: ["MoonmockClient", "MoonmockServer", "MoonmockCore", "MoonmockScript"]),
        .testTarget(name: "MoonmockCLITests", dependencies: ["moonmock", "MoonmockFuzz", "MoonmockTestSupport", "MoonmockProcessSupport"]),
        .testTarget(name: "MoonmockImportTests", dependencies: ["MoonmockImport", "MoonmockYAML", "MoonmockContract", "MoonmockCore", "MoonmockScript"]),
        // The same requests through both front doors: in-process and over a socket.
        .testTarget(name: "MoonmockParityTests", dependencies: ["Moonmock", "MoonmockServer", "MoonmockCore"]),
    ]
)
