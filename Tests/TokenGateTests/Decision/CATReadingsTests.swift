import CDNTokens
import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The CATs a key set authenticated (docs/DESIGN.md#cat-at-the-origin): kept
/// by their text's digest, bounded, dropped once expired; at the gate, a CAT
/// presented again is not authenticated again, and its claims are.
@Suite struct CATReadingsTests {
    let clock = GateFixtures.Clock()
    var now: Int64 { CATGateFixtures.seconds(clock.read()) }

    func reading(_ text: String) throws -> (CATReadings.Key, AuthenticatedCommonAccessToken) {
        let authenticated = try UnverifiedCommonAccessToken(text: text).authenticated(by: [CATGateFixtures.hmacKey()])
        return (CATReadings.Key(Digest.sha256(text.utf8)), authenticated)
    }

    @Test func aReadingIsFoundByItsTextUntilItsExpiryAndTheLeewayPass() throws {
        let readings = CATReadings(maximumEntries: 10)
        let text = CATGateFixtures.token(now: now)
        let (key, authenticated) = try reading(text)
        #expect(readings.lookup(key, now: now, leeway: 30) == nil)
        readings.insert(key, authenticated, textBytes: text.utf8.count)
        #expect(readings.lookup(key, now: now, leeway: 30) == authenticated)
        // Another text of the same claims (a new cti) is another entry.
        let (otherKey, _) = try reading(CATGateFixtures.token(now: now))
        #expect(readings.lookup(otherKey, now: now, leeway: 30) == nil)
        let expires = try #require(authenticated.token.expires)
        #expect(readings.lookup(key, now: expires + 30, leeway: 30) == authenticated)
        #expect(readings.lookup(key, now: expires + 31, leeway: 30) == nil)
        #expect(readings.count == 0)
    }

    @Test func theOldestGoesFirstAndNoneIsKeptWithASizeOfZero() throws {
        let readings = CATReadings(maximumEntries: 2)
        let made = try (0..<3).map { _ in try reading(CATGateFixtures.token(now: now)) }
        for (key, authenticated) in made { readings.insert(key, authenticated, textBytes: 200) }
        #expect(readings.count == 2)
        #expect(readings.lookup(made[0].0, now: now, leeway: 0) == nil)
        #expect(readings.lookup(made[1].0, now: now, leeway: 0) != nil)
        #expect(readings.lookup(made[2].0, now: now, leeway: 0) != nil)
        // In bytes too: two entries of this cost fill the bound, a third pushes the oldest out.
        let byBytes = CATReadings(maximumEntries: 100, maximumBytes: 2 * CATReadings.cost(ofText: 200))
        for (key, authenticated) in made { byBytes.insert(key, authenticated, textBytes: 200) }
        #expect(byBytes.count == 2 && byBytes.lookup(made[0].0, now: now, leeway: 0) == nil)
        let none = CATReadings(maximumEntries: 0)
        none.insert(made[0].0, made[0].1, textBytes: 200)
        #expect(none.count == 0 && none.lookup(made[0].0, now: now, leeway: 0) == nil)
    }

    /// The gate: one authentication for a CAT sent with every segment, its
    /// `catu` and `exp` judged against each request; a forged CAT is never
    /// kept; a reload's new keys start with no readings, so a CAT the old key
    /// authenticated is refused at once.
    @Test func atTheGateACATSentAgainIsJudgedAgainstEachRequestAndAReloadForgetsIt() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (runtime, keyFile) = try CATGateFixtures.gateWithRewritableKey(in: directory, clock: clock)
        let origin = try #require(runtime.gate.cat)
        let text = CATGateFixtures.token(now: now, [CATGateFixtures.catu(.path, .prefix, "/hls/tnt/")])
        try await runtime.application().test(.router) { client in
            func status(_ path: String, _ cat: String = text) async throws -> String? {
                try await client.authRequest(path, headers: [CATOriginTests.catHeader: cat]).tokenStatus
            }
            #expect(try await status("/hls/tnt/seg1.ts") == "VALID_TOKEN")
            #expect(origin.keys.current.readings.count == 1)
            #expect(try await status("/hls/tnt/seg2.ts") == "VALID_TOKEN")
            #expect(try await status("/hls/cnn/seg2.ts") == "URL_NOT_COVERED")
            #expect(origin.keys.current.readings.count == 1)
            let start = clock.read()
            clock.advance(3_600_000)
            #expect(try await status("/hls/tnt/seg3.ts") == "TOKEN_EXPIRED")
            clock.set(start)
            // One byte of the MAC changed: refused, and nothing kept.
            var forged = Array(text.utf8)
            forged[forged.count - 2] = forged[forged.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(try await status("/hls/tnt/seg1.ts", String(decoding: forged, as: UTF8.self)) == "INVALID_SIGNATURE")
            #expect(origin.keys.current.readings.count <= 1)
            try Data(String(repeating: "5a", count: 32).utf8).write(to: keyFile)
            #expect(runtime.reloader.reload(because: "test"))
            #expect(origin.keys.current.readings.count == 0)
            #expect(try await status("/hls/tnt/seg1.ts") == "INVALID_SIGNATURE")
        }
    }
}
