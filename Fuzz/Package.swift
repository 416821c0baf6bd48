// swift-tools-version:6.0
// The libFuzzer targets of tokeninspect: its own package, so the main package
// never builds with sanitizers and the fuzzers build with them everywhere.
//
// Build (Fuzz/run does this; see Fuzz/README.md for why the extra -Xswiftc):
//   swift build -c debug --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
import PackageDescription

let targets = ["FuzzDecode", "FuzzVerify", "FuzzStream", "FuzzDates", "FuzzJSON"]
// Targets over EntitlementTokensRedis's NIO-free RESP decoder (product RedisRESP).
let respTargets = ["FuzzRESP"]

let package = Package(
    name: "tokeninspect-fuzz",
    dependencies: [
        // The main package, by path. `name:` pins its identity, so a clone in a
        // directory of any name resolves the same.
        .package(name: "tokeninspect", path: ".."),
    ],
    targets: [
        // OpenSSL libcrypto, called directly by the harness to re-check every
        // VALID_TOKEN verdict independently of the library's own Signature/ code.
        .systemLibrary(
            name: "CFuzzCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libxml2's tree API, for FuzzDecode's second reading of each accepted
        // element. C, so no libxml2 type meets the main package's CLibXML2 module.
        .target(
            name: "CFuzzXMLTree",
            cSettings: [.unsafeFlags(["-I/usr/include/libxml2"])],
            linkerSettings: [.linkedLibrary("xml2")]
        ),
        // The oracles, shared by the five targets (and mirrored by the main
        // package's FuzzFailCaseTests, which replays Fuzz/FailCases in-process).
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CFuzzCrypto",
                "CFuzzXMLTree",
                .product(name: "EntitlementTokens", package: "tokeninspect"),
            ]
        ),
    ] + targets.map { name in
        // One file, not named main.swift: libFuzzer supplies main().
        .executableTarget(name: name, dependencies: ["FuzzSupport"])
    } + respTargets.map { name in
        .executableTarget(name: name, dependencies: [
            "FuzzSupport",
            .product(name: "RedisRESP", package: "tokeninspect"),
        ])
    }
)
