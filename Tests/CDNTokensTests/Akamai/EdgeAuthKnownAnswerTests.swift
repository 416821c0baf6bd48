import Foundation
import Testing

@testable import CDNTokens

/// Tokens akamai-edgeauth 0.3.2 made (Fixtures/Akamai/edgeauth-vectors.json,
/// written by make-edgeauth-vectors.py beside it): our maker writes the same
/// bytes for the same inputs, our reader reads them back to the same text,
/// and our verifier accepts them for the path each covers.
@Suite struct EdgeAuthKnownAnswerTests {
    @Test("the fixtures cover every option the tool has")
    func fixturesCoverTheOptions() {
        let vectors = EdgeAuthVector.all
        #expect(vectors.count >= 19)
        #expect(Set(vectors.map(\.algorithm)) == ["sha256", "sha1", "md5"])
        #expect(vectors.contains { $0.url != nil && $0.escape_early } && vectors.contains { $0.url != nil && !$0.escape_early })
        #expect(vectors.contains { ($0.acl?.count ?? 0) > 1 })
        #expect(vectors.contains { $0.salt != nil } && vectors.contains { $0.window_seconds != nil })
        #expect(vectors.contains { $0.ip != nil && $0.session_id != nil && $0.payload != nil && $0.escape_early })
    }

    @Test("our maker writes the tool's bytes", arguments: EdgeAuthVector.all)
    func makerMatches(_ vector: EdgeAuthVector) throws {
        let made = try vector.maker().make(vector.target, now: vector.now)
        #expect(made.text == vector.token)
    }

    @Test("our reader reads the tool's token back to the same text", arguments: EdgeAuthVector.all)
    func readerRoundTrips(_ vector: EdgeAuthVector) throws {
        let token = try EdgeAuthToken(parsing: vector.token)
        #expect(token.text == vector.token)
        #expect(token.isURLForm == (vector.url != nil))
        #expect(token.acl?.map(\.text) == vector.acl)
        #expect(token.fields.last?.name == "hmac")
        #expect(token.fields.map(\.name).filter { ["st", "exp"].contains($0) }.count == (vector.start_time == nil ? 1 : 2))
    }

    @Test("our verifier accepts the tool's token for the path it covers", arguments: EdgeAuthVector.all)
    func verifierAccepts(_ vector: EdgeAuthVector) throws {
        let token = try EdgeAuthToken(parsing: vector.token)
        let verified = try token.verify(
            key: EdgeAuthKey(hex: vector.key),
            facts: vector.facts(),
            algorithm: #require(EdgeAuthAlgorithm(rawValue: vector.algorithm)),
            salt: vector.salt
        )
        #expect(verified.token == token)
        if vector.url != nil {
            #expect(verified.signedURL != nil)
            #expect(verified.coveringACL == nil)
        } else {
            #expect(verified.coveringACL != nil)
        }
    }

    @Test("a changed byte of the tool's token is refused", arguments: EdgeAuthVector.all)
    func tamperingIsRefused(_ vector: EdgeAuthVector) throws {
        let key = try EdgeAuthKey(hex: vector.key)
        let algorithm = try #require(EdgeAuthAlgorithm(rawValue: vector.algorithm))
        // Another expiry, another signed URL, no salt, the wrong salt: each breaks the MAC.
        let later = vector.token.replacingOccurrences(of: "exp=17672", with: "exp=17682")
        RefusalExpectation.expect(.invalidSignature) {
            try EdgeAuthToken(parsing: later).verify(key: key, facts: vector.facts(leeway: 1_000_000), algorithm: algorithm, salt: vector.salt)
        }
        let token = try EdgeAuthToken(parsing: vector.token)
        let otherSalt = (vector.salt ?? "") + "x"
        RefusalExpectation.expect(.invalidSignature) { try token.verify(key: key, facts: vector.facts(), algorithm: algorithm, salt: otherSalt) }
        if vector.url != nil {
            var facts = try vector.facts()
            facts.url = try CDNURL(parsing: "https://edge.example.test/vod/other.mp4")
            RefusalExpectation.expect(.invalidSignature) { try token.verify(key: key, facts: facts, algorithm: algorithm, salt: vector.salt) }
        }
    }
}
