// swift-tools-version:6.0
// Throughput and memory benchmarks for EntitlementTokens and tokeninspect.
// A release-mode harness rather than a timed test: `Benchmarks/run` builds it,
// runs it beside the C, Python and Java baselines, and prints medians and ratios.
import PackageDescription

let package = Package(
    name: "TokenBenchmarks",
    dependencies: [
        .package(name: "tokeninspect", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "tokenbench",
            dependencies: [.product(name: "EntitlementTokens", package: "tokeninspect")]
        ),
    ]
)
