import CDNTokens
import Foundation
import IntegrationSupport
import Testing

/// The tokens a manifest carries, checked by the CDNs' own tools: the
/// `__token__` the gate writes into a segment URI is the token
/// akamai-edgeauth makes for the folder's ACL, and the CloudFront
/// `Policy` there is botocore's policy bytes for the folder, its `Signature`
/// one `cryptography` verifies with the key pair's public half.
@Suite("Tokens inside manifests against their CDNs' tools")
struct ManifestTokenPeerTests {
    static let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nseg-1.ts\n#EXTINF:6.0,\n../tnt/seg-2.ts?v=1\n#EXT-X-ENDLIST\n"
    static let now: Int64 = 1_800_000_000

    /// The playlist as `profile` rewrites it for one viewer, and the query of each segment URI, decoded.
    static func segmentQueries(_ profile: CDNProfile, base: String) throws -> [[String: String]] {
        let url = try CDNURL(parsing: base + "/live/tnt/index.m3u8")
        let parsed = try ParsedManifest.read(
            Array(playlist.utf8),
            url: url,
            scope: ManifestScope(resourceURL: try #require(profile.settings.url(of: "TNT")), tokenNames: profile.queryTokenNames)
        )
        let lifetime = parsed.tokenLifetime(profileLifetime: profile.lifetime, secondsUntilSessionEnd: 3600)
        let token = try profile.queryToken(resource: "TNT", now: now, lifetime: lifetime, clientIP: nil, requestor: nil)
        let text = String(
            decoding: parsed.rewritten(for: ManifestViewer(gateRoute: "/v1/manifest", session: "S", token: token.fields)),
            as: UTF8.self
        )
        let segments = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(segments.count == 2)
        return try segments.map { line in
            #expect(line.hasPrefix(base + "/live/tnt/seg-"), "\(line)")
            let query = try #require(line.split(separator: "?", maxSplits: 1).last)
            var pairs: [String: String] = [:]
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                pairs[String(parts[0])] = String(parts.count == 2 ? parts[1] : "").removingPercentEncoding
            }
            return pairs
        }
    }

    @Test(.enabled(if: IndependentPython.available(["akamai.edgeauth"]), "pip install akamai-edgeauth==0.3.2"))
    func anAkamaiTokenInAManifestIsTheOneAkamaiEdgeAuthMakesForTheFolder() throws {
        let key = "52a152a152a152a152a152a152a152a1"
        let profile = try CDNProfileManifestTests.profile(
            """
            name = edge
            kind = akamai
            key = edge.key
            resource = TNT https://cdn.example.net/live/tnt/master.m3u8
            carrier = manifest
            manifest-origin = http://origin.internal:8080/
            lifetime = 300
            """,
            keys: ["edge.key": Array((key + "\n").utf8)]
        )
        for pairs in try Self.segmentQueries(profile, base: "https://cdn.example.net") {
            let token = try #require(pairs["__token__"])
            let fields = Dictionary(
                uniqueKeysWithValues: token.split(separator: "~").map { field in
                    let parts = field.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), String(parts[1]))
                }
            )
            // VOD: 12 s of segments and the profile's 300 s.
            #expect(fields["exp"] == String(Self.now + 12 + 300))
            let made = try IndependentPython.run(
                """
                import sys
                from akamai.edgeauth import EdgeAuth
                auth = EdgeAuth(key=sys.argv[1], start_time=int(sys.argv[2]), end_time=int(sys.argv[3]), escape_early=False)
                sys.stdout.write(auth.generate_acl_token("/live/tnt/*"))
                """,
                arguments: [key, try #require(fields["st"]), try #require(fields["exp"])]
            )
            #expect(made == token)
        }
    }

    @Test(.enabled(if: IndependentPython.available(["botocore", "cryptography"]), "pip install botocore cryptography"))
    func aCloudFrontTokenInAManifestIsBotocoresPolicyForTheFolderAndVerifies() throws {
        let keyPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/CloudFront/test-only-cloudfront-rsa2048.pem").path
        let profile = try CDNProfileManifestTests.profile(
            """
            name = edge
            kind = cloudfront
            key = \(keyPath) K2JCJMDEHXQW5F
            resource = TNT https://d111111abcdef8.cloudfront.net/live/tnt/master.m3u8
            carrier = manifest
            manifest-origin = http://origin.internal:8080/
            lifetime = 300
            """,
            keys: [keyPath: Array(try Data(contentsOf: URL(fileURLWithPath: keyPath)))]
        )
        for pairs in try Self.segmentQueries(profile, base: "https://d111111abcdef8.cloudfront.net") {
            #expect(pairs["Key-Pair-Id"] == "K2JCJMDEHXQW5F")
            let answer = try IndependentPython.run(
                """
                import base64, sys
                from datetime import datetime, timezone
                from botocore.signers import CloudFrontSigner
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import padding
                key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), password=None)
                cf = CloudFrontSigner('K2JCJMDEHXQW5F', lambda m: key.sign(m, padding.PKCS1v15(), hashes.SHA1()))
                def unsafe(text):
                    return base64.b64decode(text.replace('-', '+').replace('_', '=').replace('~', '/'))
                policy = unsafe(sys.argv[2])
                expected = cf.build_policy('https://d111111abcdef8.cloudfront.net/live/tnt/*',
                                           datetime.fromtimestamp(int(sys.argv[4]), tz=timezone.utc)).encode()
                key.public_key().verify(unsafe(sys.argv[3]), policy, padding.PKCS1v15(), hashes.SHA1())
                sys.stdout.write('same' if policy == expected else 'differs: %r %r' % (policy, expected))
                """,
                arguments: [keyPath, try #require(pairs["Policy"]), try #require(pairs["Signature"]), String(Self.now + 12 + 300)]
            )
            #expect(answer == "same")
        }
    }
}
