import Testing

@testable import EntitlementTokens

/// One parser pool per configuration, and every reading of a nested Media RSS
/// document done with the configured limits.
@Suite struct ParserReuseTests {
    static let deepRSS = #"<rss version="2.0"><channel><title>TNT</title><item><guid>42</guid></item></channel></rss>"#

    static func verifier(_ configuration: DecoderConfiguration) -> TokenVerifier {
        TokenVerifier(
            signature: .trustedKeys(Minting.ring("test-rsa2048.pub.pem")),
            policy: VerificationPolicy(clock: { Minting.issued }),
            decoderConfiguration: configuration
        )
    }

    /// `<rss><channel><item><guid>` is four deep: a `maxDepth` of 3 makes it no Media RSS.
    static var shallow: DecoderConfiguration {
        var configuration = DecoderConfiguration()
        configuration.maxDepth = 3
        return configuration
    }

    @Test func anExpectedMediaRSSResourceIsReadWithTheConfiguredLimits() async {
        let token = Minting.token(Minting.request(resource: "TNT"))
        let expecting = RequestExpectations(resourceID: Self.deepRSS)
        let lenient = await Self.verifier(.default).verify(token, expecting: expecting)
        #expect(lenient.status == .validToken, "\(lenient.reason)")
        let strict = await Self.verifier(Self.shallow).verify(token, expecting: expecting)
        #expect(strict.status == .invalidResourceID)
        #expect(strict.reason.contains("maxDepth"), "\(strict.reason)")
    }

    @Test func aTokensMediaRSSResourceIsReadWithTheConfiguredLimits() async throws {
        let token = Minting.token(Minting.request(resource: Self.deepRSS))
        let expecting = RequestExpectations(resourceID: "TNT")
        #expect(await Self.verifier(.default).verify(token, expecting: expecting).status == .validToken)
        let strict = await Self.verifier(Self.shallow).verify(token, expecting: expecting)
        #expect(strict.status == .invalidResourceID)
        #expect(strict.reason.contains("maxDepth"), "\(strict.reason)")
        let decoded = try TokenDecoder(configuration: Self.shallow).decode(token)
        #expect(decoded.mediaRSS == nil)
        #expect(decoded.warnings.contains { $0.contains("maxDepth") })
    }

    @Test func oneSharedPoolPerConfiguration() {
        var other = DecoderConfiguration()
        other.maxFieldBytes = 123
        let first = TokenDecoderPool.shared(for: other)
        #expect(TokenDecoderPool.shared(for: other) === first)
        #expect(TokenDecoderPool.shared(for: .default) !== first)
        #expect(first.withDecoder { $0.parser.configuration } == other)
        #expect(MediaRSSResource.reading(of: Self.deepRSS, configuration: other).map(\.itemGUID) == .success("42"))
    }
}
