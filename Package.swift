// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "tokeninspect",
    products: [
        .library(name: "EntitlementTokens", targets: ["EntitlementTokens"]),
        // The tokens a CDN edge checks (Akamai EdgeAuth, CloudFront, the Common
        // Access Token, nginx secure_link): issued by tokengate, read back by
        // tokeninspect. No server dependency, so the CLI builds it.
        .library(name: "CDNTokens", targets: ["CDNTokens"]),
        // A customer's capture (HAR) read streamed, every credential of the two
        // libraries above found in it and judged at its entry's time: the CLI's
        // `har` and the debugger's HAR upload. No server dependency.
        .library(name: "HARReport", targets: ["HARReport"]),
        .executable(name: "tokeninspect", targets: ["tokeninspect"]),
        .executable(name: "tokengate", targets: ["tokengate"]),
        // The shared replay store (docs/DESIGN.md#one-time-use-across-a-fleet), on SwiftNIO; the CLI never builds it.
        .library(name: "EntitlementTokensRedis", targets: ["EntitlementTokensRedis"]),
        // The RESP reply decoder alone, plain Swift: the fuzz package uses it
        // without building SwiftNIO under sanitizers.
        .library(name: "RedisRESP", targets: ["RedisRESP"]),
        // The fuzz oracles, shared by the unit tests (which replay every
        // Fuzz/FailCases and seed input through them) and by the libFuzzer
        // targets in Fuzz/, as swift-nio shares NIOTestUtils: each oracle exists once.
        .library(name: "TokenTestSupport", targets: ["TokenTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation`: the DocC catalog of EntitlementTokens.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // tokengate only: the HTTP verification service and what runs it.
        // Without the default traits: FullFoundation (full Foundation, and with it
        // ICU's data, for URL-encoded forms' date formats the gate never decodes)
        // and ConfigurationSupport (swift-configuration, which the gate does not
        // read its settings through) stay out of the binary
        // (docs/DESIGN.md#the-package).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
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
        .target(
            name: "CDNTokens",
            dependencies: ["EntitlementTokens"]
        ),
        .target(
            name: "HARReport",
            dependencies: ["EntitlementTokens", "CDNTokens"]
        ),
        .executableTarget(
            name: "tokeninspect",
            dependencies: [
                "EntitlementTokens",
                "CDNTokens",
                "HARReport",
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
                // TLSUserEvent.handshakeCompleted, when tls-server-name is checked.
                .product(name: "NIOTLS", package: "swift-nio"),
                // RedisClient is a Service: run() until cancelled or shut down gracefully.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "EntitlementTokensRedisTests",
            dependencies: [
                "EntitlementTokensRedis", "RedisRESP", "IntegrationSupport", "TokenTestSupport",
                // EmbeddedChannel and time advanced by hand, for the connection's state machine.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // TLSUserEvent, for the tls-server-name check on an EmbeddedChannel.
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What integration tests share: a throw-away redis-server on a free
        // loopback port, and the skip-or-require convention.
        .target(
            name: "IntegrationSupport",
            path: "Tests/IntegrationSupport"
        ),
        // The verification service: routes, verdict-to-HTTP mapping, sessions,
        // verdict cache, configuration. Only `tokengate` depends on it, so
        // building `tokeninspect` never builds Hummingbird.
        .target(
            name: "TokenGate",
            dependencies: [
                "EntitlementTokens",
                "CDNTokens",
                // The debugger's HAR upload: the same reading and report as `tokeninspect har`.
                "HARReport",
                "EntitlementTokensRedis",
                "RedisRESP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The span exporter's HTTP client (Operations/OTLPHTTPPoster.swift); Hummingbird links them already.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The HTTP/1 parts as HTTPTypes (HTTP/HTTP1ToHTTPTypesCodec.swift); Hummingbird links them already.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            // The debugger's page, script and style as files (docs/DESIGN.md#assets-are-files),
            // compiled into the binary as byte arrays (`PackageResources`): no bundle to ship.
            resources: [
                .embedInCode("Debugger/Assets/debugger.html"),
                .embedInCode("Debugger/Assets/debugger.js"),
                .embedInCode("Debugger/Assets/debugger.css"),
                .embedInCode("Debugger/Assets/favicon.svg"),
            ]
        ),
        .executableTarget(
            name: "tokengate",
            dependencies: [
                "TokenGate",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // OpenSSL libcrypto for the oracles' independent re-check of signatures
        // and device hashes: a module of its own, so the re-check shares no
        // Swift code with the library's Signature/ stage.
        .systemLibrary(
            name: "CTestCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libxml2's tree API, for the decode oracle's second reading of each
        // accepted element (the library uses the SAX push parser). C, so no
        // libxml2 type meets the library's CLibXML2 module; it takes libxml2's
        // include path from that module's pkg-config entry.
        .target(
            name: "CTestXMLTree",
            dependencies: ["CLibXML2"],
            linkerSettings: [.linkedLibrary("xml2")]
        ),
        .target(
            name: "TokenTestSupport",
            dependencies: ["EntitlementTokens", "CDNTokens", "HARReport", "RedisRESP", "CTestCrypto", "CTestXMLTree"]
        ),
        .testTarget(
            name: "EntitlementTokensTests",
            dependencies: ["EntitlementTokens", "TokenTestSupport", "IntegrationSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "CDNTokensTests",
            dependencies: ["CDNTokens", "EntitlementTokens", "IntegrationSupport", "TokenTestSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "HARReportTests",
            dependencies: ["HARReport", "CDNTokens", "EntitlementTokens", "TokenTestSupport"]
        ),
        .testTarget(
            name: "TokenInspectTests",
            dependencies: ["tokeninspect", "EntitlementTokens", "CDNTokens", "IntegrationSupport"],
            exclude: ["Golden"]
        ),
        // What both of the gate's test targets use (test targets cannot depend on each
        // other): fixtures, in-process gates, a raw HTTP client. It reaches the gate only
        // through `package` declarations, so it builds in release too (docs/DESIGN.md#the-test-command).
        .target(
            name: "GateTestSupport",
            dependencies: [
                "TokenGate",
                "EntitlementTokens",
                "CDNTokens",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/GateTestSupport"
        ),
        // The gate in process: folders as Sources/TokenGate's.
        .testTarget(
            name: "TokenGateTests",
            dependencies: [
                "TokenGate",
                "GateTestSupport",
                "EntitlementTokens",
                "EntitlementTokensRedis",
                "IntegrationSupport",
                "TokenTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ]
        ),
        // The gate with real peers or as a process: nginx, Caddy, Redis, Chromium, node,
        // podman, the .deb, network namespaces, the built `tokengate`.
        .testTarget(
            name: "TokenGateIntegrationTests",
            dependencies: [
                "TokenGate",
                "GateTestSupport",
                "EntitlementTokens",
                "EntitlementTokensRedis",
                "RedisRESP",
                "IntegrationSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            // The table of hostile strings the Swift escaping and the debugger's script are
            // both checked against, and the OTLP receiver of the span export's tests.
            exclude: ["Fixtures"]
        ),
    ]
)
