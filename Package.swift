// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "tokeninspect",
    products: [
        .library(name: "EntitlementTokens", targets: ["EntitlementTokens"]),
        .executable(name: "tokeninspect", targets: ["tokeninspect"]),
        // The shared replay store (SPEC §10): the only product that builds SwiftNIO.
        .library(name: "EntitlementTokensRedis", targets: ["EntitlementTokensRedis"]),
        // The RESP reply decoder alone, plain Swift: the fuzz package uses it
        // without building SwiftNIO under sanitizers.
        .library(name: "RedisRESP", targets: ["RedisRESP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // libxml2: the push (SAX2) parser that reads the token element.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // OpenSSL libcrypto only: keys, digests, signatures.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "EntitlementTokens",
            dependencies: ["CLibXML2", "COpenSSL"]
        ),
        .executableTarget(
            name: "tokeninspect",
            dependencies: [
                "EntitlementTokens",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // RESP2 replies and commands over bytes; no I/O, no dependency.
        .target(name: "RedisRESP"),
        .target(
            name: "EntitlementTokensRedis",
            dependencies: [
                "EntitlementTokens",
                "RedisRESP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "EntitlementTokensRedisTests",
            dependencies: ["EntitlementTokensRedis", "RedisRESP"]
        ),
        .testTarget(
            name: "EntitlementTokensTests",
            dependencies: ["EntitlementTokens"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "TokenInspectTests",
            dependencies: ["tokeninspect", "EntitlementTokens"],
            exclude: ["Golden"]
        ),
    ]
)
