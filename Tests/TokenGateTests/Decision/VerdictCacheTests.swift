import EntitlementTokens
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

@Suite struct VerdictCacheTests {
    let clock = GateFixtures.Clock()

    @Test func anAuthorizationTokenIsVerifiedOnceThenServedFromTheCache() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let token = GateFixtures.token(GateFixtures.request(.authorization))
        try await runtime.application().test(.router) { client in
            for _ in 0..<5 {
                let response = try await client.authRequest("/a?token=\(token)")
                #expect(response.tokenStatus == "VALID_TOKEN")
                #expect(response["X-Token-Kind"] == "authorization")
                #expect(response["X-Token-Resource"] == "TNT")
            }
            #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="hit"}"#] == 4)
            #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="insert"}"#] == 1)
            // Another resource is another key: verified, and refused.
            let other = try await client.authRequest("/a?token=\(token)", resource: "CNN")
            #expect(other.tokenStatus == "INVALID_RESOURCE_ID")
            // Past the token's expiry the verifier speaks again.
            clock.set(GateFixtures.at(3_600_000 + 30_001))
            let expired = try await client.authRequest("/a?token=\(token)")
            #expect(expired.tokenStatus == "TOKEN_EXPIRED")
        }
    }

    @Test func mediaTokensAreNeverCached() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let token = GateFixtures.token()
        try await runtime.application().test(.router) { client in
            let first = try await client.authRequest("/a?token=\(token)")
            #expect(first.tokenStatus == "VALID_TOKEN")
            let second = try await client.authRequest("/a?token=\(token)")
            #expect(second.tokenStatus == "TOKEN_REPLAYED")
        }
        #expect(runtime.cache.count == 0)
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="hit"}"#] == 0)
        // docs/DESIGN.md#the-verdict-cache: media tokens never enter the cache, so they are no misses either.
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="miss"}"#] == 0)
    }

    @Test func aReusableTokenThatMissesIsCountedOnce() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            _ = try await client.authRequest("/a?token=\(GateFixtures.token(GateFixtures.request(.authorization)))")
            _ = try await client.authRequest("/a?token=not-a-token")
        }
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="miss"}"#] == 2)
    }

    @Test func sizeZeroSwitchesTheCacheOff() async throws {
        let runtime = try GateFixtures.runtime(["--verdict-cache-size", "0"], clock: clock)
        let token = GateFixtures.token(GateFixtures.request(.authentication))
        try await runtime.application().test(.router) { client in
            for _ in 0..<3 {
                let response = try await client.authRequest("/a?token=\(token)")
                #expect(response.tokenStatus == "VALID_TOKEN")
            }
        }
        #expect(runtime.cache.count == 0)
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="miss"}"#] == 0)
    }

    @Test func theCacheIsBoundedInEntriesAndBytes() throws {
        let metrics = GateMetrics()
        let byCount = VerdictCache(maximumEntries: 3, events: metrics)
        let byBytes = VerdictCache(maximumEntries: 1000, maximumBytes: 1000, events: metrics)
        let verifier = TokenVerifier(
            signature: .trustedKeys(try KeyRing.load(paths: [GateFixtures.publicKey])),
            policy: VerificationPolicy(clock: { GateFixtures.at(60_000) })
        )
        for index in 0..<50 {
            let token = GateFixtures.token(GateFixtures.request(.authorization, resource: "R\(index)"))
            let verified = try #require(verifier.verify(token).verified)
            let allowance = Allowance(token: verified.token, expectedResource: nil)
            for cache in [byCount, byBytes] {
                cache.insert(
                    VerdictCache.key(token: token.utf8, resource: nil, deviceID: nil),
                    verdict: verified,
                    allowance: allowance,
                    tokenID: "0123456789ab",
                    generation: cache.generationAndEmptiness.generation
                )
            }
            #expect(byCount.count <= 3)
            #expect(byBytes.bytes <= 1000)
        }
        #expect(byCount.count == 3)
        #expect(byBytes.count > 1)
        let before = byCount.generationAndEmptiness
        #expect(!before.isEmpty)
        byCount.removeAll()
        #expect(byCount.count == 0 && byCount.bytes == 0)
        // Emptied, a lookup can find nothing (the gate then makes no key before
        // it verifies), and the generation moved on.
        #expect(byCount.generationAndEmptiness == (before.generation + 1, true))
    }

    /// A cache that a reload emptied fills again: the key an allow is kept
    /// under is made after the verification, and the next presentation hits.
    @Test func anEmptiedCacheFillsAgain() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let token = GateFixtures.token(GateFixtures.request(.authorization))
        try await runtime.application().test(.router) { client in
            let first = try await client.authRequest("/a?token=\(token)")
            #expect(first.tokenStatus == "VALID_TOKEN")
            runtime.cache.removeAll()
            #expect(runtime.cache.generationAndEmptiness.isEmpty)
            for _ in 0..<2 {
                let again = try await client.authRequest("/a?token=\(token)")
                #expect(again.tokenStatus == "VALID_TOKEN")
            }
        }
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="insert"}"#] == 2)
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="hit"}"#] == 1)
        #expect(ScrapedMetrics(runtime)[#"tokengate_verdict_cache_total{result="miss"}"#] == 2)
    }

    @Test func keysAreBoundIntoTheCacheKey() {
        let a = VerdictCache.key(token: "tok".utf8, resource: "TNT", deviceID: nil)
        #expect(a == VerdictCache.key(token: "tok".utf8, resource: "TNT", deviceID: nil))
        #expect(a != VerdictCache.key(token: "tok".utf8, resource: "TNT", deviceID: ""))
        #expect(a != VerdictCache.key(token: "tok".utf8, resource: nil, deviceID: nil))
        #expect(a != VerdictCache.key(token: "to".utf8, resource: "kTNT", deviceID: nil))
    }
}
