import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The gate reads the original URI's path once (docs/DESIGN.md#one-reading-of-a-path): a
/// path that could resolve out of the folder a credential covers is 400 `INVALID_REQUEST`
/// at every proxy convention, before any credential is judged or spent; the paths an
/// edge serves from the folder are still covered.
@Suite struct PathReadingGateTests {
    let clock = GateFixtures.Clock()
    var now: Int64 { CATGateFixtures.seconds(clock.read()) }
    static let catHeader = CATGateFixtures.header

    /// Every spelling the CDN attack used, and the library table's others.
    static let escaping = [
        "/hls/tnt/../cnn/seg-1.ts", "/hls/tnt/%2e%2e/cnn/seg-1.ts", "/hls/tnt/%2E%2E/cnn/seg-1.ts", "/hls/tnt/.%2e/cnn/seg-1.ts",
        "/hls/tnt/./../cnn/seg-1.ts", "/hls/tnt/..;/cnn/seg-1.ts", "/hls/tnt/..%2Fcnn/seg-1.ts", "/hls/tnt/..%5ccnn/seg-1.ts",
        "/hls/tnt/..\\cnn/seg-1.ts", "/hls/tnt/%00/seg-1.ts",
    ]

    func withGate(_ extra: [String] = [], _ body: @Sendable (any TestClientProtocol, GateRuntime) async throws -> Void) async throws {
        let runtime = try GateFixtures.runtime(["--cat-key", "\(CATGateFixtures.hmacPath) edge-1"] + extra, clock: clock)
        try await runtime.application().test(.router) { client in try await body(client, runtime) }
    }

    @Test func aCATScopedToAFolderNeverCoversAPathThatLeavesIt() async throws {
        try await withGate { client, runtime in
            let cat = CATGateFixtures.token(now: now)
            let inside = try await client.authRequest("/hls/tnt/seg-1.ts", headers: [Self.catHeader: cat])
            #expect(inside.tokenStatus == "VALID_TOKEN", "\(inside["X-Token-Reason"] ?? "")")
            // An unreserved byte escaped is the same path to an edge, and so to the scope.
            let escapedLetter = try await client.authRequest("/hls/%74nt/seg-1.ts", headers: [Self.catHeader: cat])
            #expect(escapedLetter.tokenStatus == "VALID_TOKEN", "\(escapedLetter["X-Token-Reason"] ?? "")")
            for path in Self.escaping {
                for answer in [
                    try await client.authRequest(path, headers: [Self.catHeader: cat]),
                    try await client.authRequest(path + "?cat=\(cat)"),
                    try await client.executeRequest(
                        uri: "/v1/ext-authz" + path,
                        method: .get,
                        headers: [Self.catHeader: cat, HTTPField.Name("X-Token-Resource")!: "TNT"],
                        body: nil
                    ),
                ] {
                    #expect(answer.status == .badRequest, "\(path): \(answer["X-Token-Reason"] ?? "")")
                    #expect(answer.tokenStatus == "INVALID_REQUEST", "\(path)")
                    #expect(answer["X-Token-Reason"]?.contains("never%20resolved") == true, "\(path): \(answer["X-Token-Reason"] ?? "")")
                }
            }
            let metrics = String(decoding: runtime.metrics.render(), as: UTF8.self)
            #expect(metrics.contains(#"tokengate_verdicts_total{status="INVALID_REQUEST",kind="none"} \#(Self.escaping.count * 3)"#), "\(metrics)")
        }
    }

    /// The path is refused before any credential is judged: a one-use CAT and a media
    /// token sent on such a path are not spent, and play on the path inside.
    @Test func nothingIsSpentOnAPathThatLeavesTheFolder() async throws {
        try await withGate { client, _ in
            let once = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))])
            let refused = try await client.authRequest("/hls/tnt/%2e%2e/cnn/seg-1.ts", headers: [Self.catHeader: once])
            #expect(refused.tokenStatus == "INVALID_REQUEST")
            let played = try await client.authRequest("/hls/tnt/seg-1.ts", headers: [Self.catHeader: once])
            #expect(played.tokenStatus == "VALID_TOKEN", "\(played["X-Token-Reason"] ?? "")")
            let token = GateFixtures.token()
            let media = try await client.authRequest("/hls/tnt/../cnn/a.m3u8?token=\(token)")
            #expect(media.tokenStatus == "INVALID_REQUEST")
            let mediaInside = try await client.authRequest("/hls/tnt/a.m3u8?token=\(token)")
            #expect(mediaInside.status == .ok, "\(mediaInside["X-Token-Reason"] ?? "")")
        }
    }
}
