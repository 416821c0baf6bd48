// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "tokeninspect",
    products: [
        .library(name: "EntitlementTokens", targets: ["EntitlementTokens"]),
        .executable(name: "tokeninspect", targets: ["tokeninspect"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation`: the DocC catalog of EntitlementTokens.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
