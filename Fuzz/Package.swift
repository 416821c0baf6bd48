// swift-tools-version:6.0
// The libFuzzer targets of tokeninspect: its own package, so the main package
// never builds with sanitizers and the fuzzers build with them everywhere.
//
// Build (Fuzz/run does this; see Fuzz/README.md for why the extra -Xswiftc):
//   swift build -c debug --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
import PackageDescription

// FuzzRESP reads EntitlementTokensRedis's NIO-free RESP decoder (RedisRESP);
// FuzzTopology its readings of sentinel, ROLE, redirection and cluster replies.
let targets = [
    "FuzzDecode", "FuzzVerify", "FuzzStream", "FuzzDates", "FuzzJSON", "FuzzRESP", "FuzzTopology", "FuzzJWS", "FuzzMetadata",
    // The CDN formats (CDNTokens): EdgeAuth, CloudFront, the Common Access Token, secure_link,
    // and the one reading of a request path every scope is judged against.
    "FuzzEdgeAuth", "FuzzCloudFront", "FuzzCAT", "FuzzSecureLink", "FuzzRequestPath",
    // A manifest read and rewritten per viewer (CDNTokens/Manifests).
    "FuzzHLS",
    // A DASH MPD read and rewritten per viewer (CDNTokens/Manifests).
    "FuzzDASH",
    // A HAR capture read streamed, reported and redacted (HARReport).
    "FuzzHAR",
]

let package = Package(
    name: "tokeninspect-fuzz",
    dependencies: [
        // The main package, by path. `name:` pins its identity, so a clone in a
        // directory of any name resolves the same.
        .package(name: "tokeninspect", path: "..")
    ],
    targets: targets.map { name in
        // One file, not named main.swift: libFuzzer supplies main(). The
        // oracles are the main package's TokenTestSupport, which the unit
        // tests replay Fuzz/FailCases through as well.
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "TokenTestSupport", package: "tokeninspect")
            ]
        )
    }
)
