import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// docs/DESIGN.md#operators: a log line's token id is the first 12 hex digits of the SHA-256
/// of the signed bytes. The gate takes it from the digest the verifier made
/// (issue 22 item 2: one digest per token) and hashes the bytes itself only
/// when the verifier made none; either way the id is the same, checked here
/// against OpenSSL's one-shot digest (`EVP_Digest`) of the bytes.
@Suite struct TokenIDTests {
    static func expectedID(_ token: String) throws -> String {
        let decoded = try TokenDecoder().decode(token)
        let hex = Array("0123456789abcdef".utf8)
        let digest = ForeignDigest.sha256.digest(of: Array(decoded.signedBytes))!
        return String(decoding: digest.prefix(6).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    static let p256Key: SigningKey = try! SigningKey(
        bytes: [UInt8](
            FileManager.default.contents(
                atPath: GateFixtures.keys.appendingPathComponent("test-p256.pem").path
            )!
        ),
        source: "test-p256.pem"
    )

    @Test("the token id is the signed bytes' digest, whether the verifier made it or the gate did")
    func tokenIDIsTheSignedBytesDigest() async throws {
        let gate = try GateFixtures.runtime().gate
        func decide(_ token: String, resource: String = "TNT") async -> GateDecision {
            await gate.judge(token: Substring(token).utf8, resource: resource, deviceID: nil, now: gate.clock())
        }
        let media = GateFixtures.token()
        let allowed = await decide(media)
        #expect(allowed.status == .verdict(.validToken))
        #expect(allowed.tokenID == (try Self.expectedID(media)))
        // The replay refusal names the same token.
        let replayed = await decide(media)
        #expect(replayed.status == .verdict(.tokenReplayed))
        #expect(replayed.tokenID == allowed.tokenID)
        // Refused after the signature check: the verifier's digest.
        let other = GateFixtures.token()
        let wrongResource = await decide(other, resource: "CNN")
        #expect(wrongResource.status == .verdict(.invalidResourceID))
        #expect(wrongResource.tokenID == (try Self.expectedID(other)))
        // An RSA-2048 signature of another key: hashed, then refused.
        let untrusted = GateFixtures.token(key: GateFixtures.untrustedKey)
        let refused = await decide(untrusted)
        #expect(refused.status == .verdict(.invalidSignature))
        #expect(refused.tokenID == (try Self.expectedID(untrusted)))
        // A P-256 signature against an RSA-only ring: no key hashed the
        // bytes, so the gate does, once.
        let p256 = GateFixtures.token(key: Self.p256Key)
        let unhashed = await decide(p256)
        #expect(unhashed.status == .verdict(.invalidSignature))
        #expect(unhashed.tokenID == (try Self.expectedID(p256)))
        // Authorization tokens: the id of the verdict and of the cached allow.
        let authorization = GateFixtures.token(GateFixtures.request(.authorization))
        let first = await decide(authorization)
        let cached = await decide(authorization)
        #expect(first.status == .verdict(.validToken))
        #expect(cached.reason == "cached allow")
        #expect(first.tokenID == (try Self.expectedID(authorization)))
        #expect(cached.tokenID == first.tokenID)
    }
}
