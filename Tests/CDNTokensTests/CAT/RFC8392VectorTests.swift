import EntitlementTokens
import Foundation
import Testing

@testable import CDNTokens

/// RFC 8392's own examples (Appendix A.3, a signed CWT with `aud`, verified with the key of A.2.3;
/// A.4, a MACed CWT under HMAC 256/64), copied from the RFC: the reader verifies A.3 when told the
/// audience it answers as, refuses it without (RFC 8392 §3.1.3) or for another, and refuses A.4 by
/// its algorithm's name (docs/CDN.md says why a 64-bit tag is not read).
@Suite struct RFC8392VectorTests {
    /// A.3: COSE_Sign1 (tag 18), ES256, kid "AsymmetricECDSA256"; iss coap://as.example.com, sub erikw,
    /// aud coap://light.example.com, exp 1444064944, nbf and iat 1443944944, cti h'0b71'.
    static let signed =
        "d28443a10126a104524173796d6d657472696345434453413235365850a70175636f61703a2f2f61732e6578616d706c652e636f6d"
        + "02656572696b77037818636f61703a2f2f6c696768742e6578616d706c652e636f6d041a5612aeb0051a5610d9f0061a5610d9f007420b71"
        + "58405427c1ff28d23fbad1f29c4c7c6a555e601d6fa29f9179bc3d7438bacaca5acd08c8d4d4f96131680c429a01f85951ecee743a52b9b6"
        + "3632c57209120e1c9e30"
    /// A.4: tag 61 around COSE_Mac0 (tag 17), alg 4 (HMAC 256/64), kid "Symmetric256", the same claims.
    static let maced =
        "d83dd18443a10104a1044c53796d6d65747269633235365850a70175636f61703a2f2f61732e6578616d706c652e636f6d02656572"
        + "696b77037818636f61703a2f2f6c696768742e6578616d706c652e636f6d041a5612aeb0051a5610d9f0061a5610d9f007420b7148093101ef6d789200"
    /// A.2.3's P-256 key (x 143329cc…, y 60f7f1a7…) as a PEM public key.
    static let keyPath = CATFixtures.directory.appendingPathComponent("rfc8392-a2-3-p256-public.pem").path
    static let audience = "coap://light.example.com"
    static let during: Int64 = 1_443_944_944 + 3600

    static func keys(audience: String?) throws -> CDNVerificationKeys {
        try CDNVerificationKeys(
            kind: .cat,
            keyFile: [UInt8](try Data(contentsOf: URL(fileURLWithPath: keyPath))),
            source: keyPath,
            keyID: "AsymmetricECDSA256",
            catAudience: audience
        )
    }

    @Test func theSignedExampleVerifiesForItsAudienceOnly() throws {
        let reading = try CDNReading(text: Self.signed)
        #expect(reading.kind == .cat)
        let facts = CDNRequestFacts(now: Self.during)
        try reading.verify(keys: try Self.keys(audience: Self.audience), facts: facts)
        let unnamed = try Self.keys(audience: nil)
        let other = try Self.keys(audience: "coap://other.example.com")
        let named = try Self.keys(audience: Self.audience)
        RefusalExpectation.expect(.unsupportedClaim, naming: "aud") { try reading.verify(keys: unnamed, facts: facts) }
        RefusalExpectation.expect(.invalidSignature, naming: "coap://light.example.com") { try reading.verify(keys: other, facts: facts) }
        // Its times are the RFC's: expired a day and a half later.
        RefusalExpectation.expect(.tokenExpired) { try reading.verify(keys: named, facts: CDNRequestFacts(now: 1_444_064_944 + 600)) }
    }

    @Test func theMACedExampleIsRefusedByItsAlgorithmsName() throws {
        let reading = try CDNReading(text: Self.maced)
        let key = Array("403697de87af64611c1d32a05dab0fe1fcb715a86ab435f1ec99192d79569388".utf8)
        let keys = try CDNVerificationKeys(kind: .cat, keyFile: key, source: "rfc8392-a2-2.hex", keyID: "Symmetric256")
        RefusalExpectation.expect(.invalidSignature, naming: "HMAC 256/64") {
            try reading.verify(keys: keys, facts: CDNRequestFacts(now: Self.during))
        }
    }

    /// A profile's `audience` is written into every CAT it issues, and read back through the profile.
    @Test func aProfilesAudienceIsIssuedAndJudged() throws {
        let parameters = try ReadingFixtures.parameters()
        let claims = try CommonAccessTokenIssuer.claims(for: parameters, issuer: "TNT", audience: "edge.example", cti: [1, 2])
        #expect(claims.audience == ["edge.example"])
        #expect(claims.claims.map(\.key).prefix(2) == [.integer(1), .integer(3)], "iss, then aud")
        let none = try CommonAccessTokenIssuer.claims(for: parameters, issuer: "TNT", cti: [1, 2])
        #expect(none.audience == nil)
    }
}
