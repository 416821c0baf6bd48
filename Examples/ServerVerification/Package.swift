// swift-tools-version:6.0
// The library snippets of docs/LIBRARY.md and the DocC article "Verifying a media
// token on your server", compiled as written: Tests/EntitlementTokensTests/
// DocumentationSnippetTests.swift checks that each snippet stands verbatim in
// Sources/, and .ci/run builds this package. A new user's Package.swift names
// the repository by URL instead of this path (docs/LIBRARY.md, "Adding it").
import PackageDescription

let package = Package(
    name: "ServerVerification",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "tokeninspect", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "ServerVerification",
            dependencies: [.product(name: "EntitlementTokens", package: "tokeninspect")]
        ),
    ]
)
