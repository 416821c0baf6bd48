// swift-tools-version:6.1
// Throughput and memory benchmarks for EntitlementTokens and tokeninspect.
// A release-mode harness rather than a timed test: `Benchmarks/run` builds it,
// runs it beside the C, Python and Java baselines, and prints medians and ratios.
import PackageDescription

let package = Package(
    name: "TokenBenchmarks",
    products: [
        .executable(name: "tokenbench", targets: ["tokenbench"]),
        // docs/DESIGN.md#the-figures-that-decide: `swift build -c release --package-path Benchmarks --product limit-server`.
        .executable(name: "limit-server", targets: ["limit-server"]),
        .executable(name: "replay-store-pauses", targets: ["replay-store-pauses"]),
        // Benchmarks/redis-ha: the replay store's throughput in each Redis mode.
        .executable(name: "redis-ha-bench", targets: ["redis-ha-bench"]),
        // docs/PERFORMANCE.md, "Routes where Hummingbird users look": Hummingbird's
        // Router and middleware against a switch on the path, per request.
        .executable(name: "router-dispatch", targets: ["router-dispatch"]),
        // Benchmarks/manifest: parsing a manifest once and rewriting it per viewer, on one core.
        .executable(name: "manifest-bench", targets: ["manifest-bench"]),
    ],
    dependencies: [
        .package(name: "tokeninspect", path: ".."),
        // The limit server only: HTTP/1.1 on swift-nio alone, no Hummingbird; its
        // `--codec httptypes` converts heads as the gate does.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // router-dispatch only, without the default traits, as the gate takes it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "tokenbench",
            dependencies: [.product(name: "EntitlementTokens", package: "tokeninspect")]
        ),
        .executableTarget(
            name: "replay-store-pauses",
            dependencies: [.product(name: "EntitlementTokens", package: "tokeninspect")]
        ),
        .executableTarget(
            name: "limit-server",
            dependencies: [
                .product(name: "EntitlementTokens", package: "tokeninspect"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ]
        ),
        .executableTarget(
            name: "redis-ha-bench",
            dependencies: [
                .product(name: "EntitlementTokens", package: "tokeninspect"),
                .product(name: "EntitlementTokensRedis", package: "tokeninspect"),
            ]
        ),
        .executableTarget(
            name: "router-dispatch",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
        .executableTarget(
            name: "manifest-bench",
            dependencies: [.product(name: "CDNTokens", package: "tokeninspect")]
        ),
    ]
)
