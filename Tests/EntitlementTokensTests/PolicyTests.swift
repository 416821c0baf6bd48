import Foundation
import Testing
@testable import EntitlementTokens

/// Leeway, Media RSS equivalence, device binding and replay in detail.
@Suite struct PolicyTests {
    /// For each kind and each date shape its expiry can be written in: one
    /// second inside the leeway is fine, one second past it is expired.
    @Test(arguments: TokenKind.allCases, TokenDateParser.Shape.tokenFieldShapes)
    func leewayBoundariesAroundExpiry(kind: TokenKind, shape: TokenDateParser.Shape) throws {
        let expiry = Minting.at(420_000)
        let key = Minting.key()
        let element: String
        switch kind {
        case .media:
            // The media expiry is issueTime + ttl; the shape is that of issueTime.
            element = Fixtures.mediaElement(requestor: "TNT", resourceXML: "TNT", ttl: "420000", issueTime: Minting.issued.formatted(shape))
        case .authentication:
            element = Fixtures.authenticationElement(expires: expiry.formatted(shape, offsetMinutes: 120))
        case .authorization:
            element = Fixtures.authorizationElement(ttl: expiry.formatted(shape, offsetMinutes: -330))
        }
        let signature = Base64.encode(try key.signature(for: Array(element.utf8)))
        let token = "<signatureInfo>\(signature)<signatureInfo>\(element)"
        for leeway: Int64 in [0, 30_000] {
            let inside = Minting.verifier(now: Minting.at(420_000 + leeway - 1000)) { $0.leewayMilliseconds = leeway }
            let outside = Minting.verifier(now: Minting.at(420_000 + leeway + 1000)) { $0.leewayMilliseconds = leeway }
            #expect(inside.verify(token).status == .validToken, "\(kind) \(shape) leeway \(leeway)")
            #expect(outside.verify(token).status == .tokenExpired, "\(kind) \(shape) leeway \(leeway)")
        }
    }

    @Test(arguments: TokenDateParser.Shape.tokenFieldShapes)
    func leewayBoundariesAroundIssueTime(shape: TokenDateParser.Shape) throws {
        let element = Fixtures.mediaElement(requestor: "TNT", resourceXML: "TNT", issueTime: Minting.issued.formatted(shape, offsetMinutes: -420))
        let signature = Base64.encode(try Minting.key().signature(for: Array(element.utf8)))
        let token = "<signatureInfo>\(signature)<signatureInfo>\(element)"
        for leeway: Int64 in [0, 30_000] {
            let inside = Minting.verifier(now: Minting.at(-leeway + 1000)) { $0.leewayMilliseconds = leeway }
            let outside = Minting.verifier(now: Minting.at(-leeway - 1000)) { $0.leewayMilliseconds = leeway }
            #expect(inside.verify(token).status == .validToken)
            #expect(outside.verify(token).status == .tokenNotYetValid)
        }
    }

    static let rss = #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>mun2</title><item><title><![CDATA[Dia 2]]></title><guid>2847811</guid></item></channel></rss>"#
    static let rssOtherItem = rss.replacingOccurrences(of: "2847811", with: "999")
    static let rssNoItem = #"<rss version="2.0"><channel><title>mun2</title></channel></rss>"#
    static let rssOtherChannel = rss.replacingOccurrences(of: "mun2", with: "TNT")

    @Test(arguments: [
        ("TNT", "TNT", true),
        ("TNT", "CNN", false),
        ("mun2", rss, true),              // bare id = channel title
        (rss, "mun2", true),
        (rss, rss, true),
        (rss, rssOtherItem, false),       // same channel, different item
        (rss, rssNoItem, true),           // one side names no item
        (rssNoItem, rss, true),
        (rss, rssOtherChannel, false),    // different channel
        ("TNT", rssOtherChannel, true),
        ("tnt", "TNT", false),            // case matters
        ("<not rss>", "<not rss>", true), // opaque, exactly equal
        ("<not rss>", "not rss", false),
    ])
    func mediaRSSEquivalence(tokenResource: String, expected: String, matches: Bool) {
        let token = Minting.token(Minting.request(resource: tokenResource))
        let verdict = Minting.verifier { $0.resourceID = expected }.verify(token)
        #expect(verdict.status == (matches ? .validToken : .invalidResourceID), "\(tokenResource) vs \(expected): \(verdict.reason)")
    }

    @Test func authenticationTokensMatchTheirAuthorizedResources() {
        let token = Minting.token(Minting.request(.authentication, resource: "TNT"))
        #expect(Minting.verifier { $0.resourceID = "TNT" }.verify(token).status == .validToken)
        #expect(Minting.verifier { $0.resourceID = "CNN" }.verify(token).status == .invalidResourceID)
        var bare = Minting.request(.authentication)
        bare.resourceID = nil
        let verdict = Minting.verifier { $0.resourceID = "CNN" }.verify(Minting.token(bare))
        #expect(verdict.status == .validToken)
        #expect(verdict.checksSkipped.contains { $0.check == .resource })
    }

    @Test(arguments: [64, 40, 32])
    func deviceIDIsHashedByTheFingerprintsLength(length: Int) {
        var request = Minting.request(.authorization)
        request.fingerprint = DeviceFingerprint.hash("device-1", hexLength: length)
        let token = Minting.token(request)
        #expect(Minting.verifier { $0.device = .deviceID("device-1") }.verify(token).status == .validToken)
        #expect(Minting.verifier { $0.device = .deviceID("device-2") }.verify(token).status == .deviceMismatch)
        #expect(Minting.verifier { $0.device = .fingerprint(request.fingerprint!.uppercased()) }.verify(token).status == .validToken)
    }

    @Test func knownDigests() {
        #expect(DeviceFingerprint.hash("abc", hexLength: 32) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(DeviceFingerprint.hash("abc", hexLength: 40) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(DeviceFingerprint.hash("abc", hexLength: 64) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(DeviceFingerprint.constantTimeEquals("abc", "abc"))
        #expect(!DeviceFingerprint.constantTimeEquals("abc", "abd"))
        #expect(!DeviceFingerprint.constantTimeEquals("abc", "abcd"))
    }

    @Test func aTokenWithoutDeviceBindingFailsADeviceExpectation() {
        var request = Minting.request(.authorization)
        request.fingerprint = nil
        let verdict = Minting.verifier { $0.device = .deviceID("device-1") }.verify(Minting.token(request))
        #expect(verdict.status == .deviceMismatch)
        let media = Minting.verifier { $0.device = .deviceID("device-1") }.verify(Minting.token())
        #expect(media.status == .validToken)
        #expect(media.checksSkipped.contains { $0.check == .device })
    }

    @Test func manyConcurrentVerificationsOfOneTokenAcceptExactlyOne() async {
        let verifier = Minting.verifier { $0.replayStore = InMemoryReplayStore() }
        let token = Minting.token()
        let statuses = await withTaskGroup(of: VerificationStatus.self) { group in
            for _ in 0..<200 { group.addTask { verifier.verify(token).status } }
            return await group.reduce(into: [VerificationStatus]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == .validToken }.count == 1)
        #expect(statuses.filter { $0 == .tokenReplayed }.count == 199)
    }

    @Test func aRefusedTokenDoesNotUseUpItsOneAcceptance() {
        let store = InMemoryReplayStore()
        let token = Minting.token()
        #expect(Minting.verifier { $0.replayStore = store; $0.requestorID = "CNN" }.verify(token).status == .invalidRequestorID)
        #expect(Minting.verifier { $0.replayStore = store }.verify(token).status == .validToken)
    }

    @Test func theReplayStoreForgetsExpiredEntriesAndStaysBounded() {
        let store = InMemoryReplayStore(capacity: 3)
        func identity(_ byte: UInt8) -> ReplayIdentity { ReplayIdentity(digest: [byte]) }
        let now = Minting.issued
        #expect(store.acceptWithoutWaiting(identity(1), until: Minting.at(1000), now: now) == .accepted)
        #expect(store.acceptWithoutWaiting(identity(1), until: Minting.at(1000), now: now) == .replayed)
        #expect(store.acceptWithoutWaiting(identity(2), until: Minting.at(5000), now: now) == .accepted)
        #expect(store.acceptWithoutWaiting(identity(3), until: Minting.at(9000), now: now) == .accepted)
        // Full: the entry closest to expiring (1) makes room.
        #expect(store.acceptWithoutWaiting(identity(4), until: Minting.at(9000), now: now) == .accepted)
        #expect(store.count == 3)
        #expect(store.acceptWithoutWaiting(identity(2), until: Minting.at(5000), now: now) == .replayed)
        // After their expiry, entries are forgotten.
        #expect(store.acceptWithoutWaiting(identity(5), until: Minting.at(20_000), now: Minting.at(9500)) == .accepted)
        #expect(store.count == 1)
    }

    @Test func durationsReadLikeAPersonWouldSayThem() {
        #expect(DurationText.describe(milliseconds: 250) == "250 ms")
        #expect(DurationText.describe(milliseconds: 41_000) == "41 s")
        #expect(DurationText.describe(milliseconds: 250_000) == "4 min 10 s")
        #expect(DurationText.describe(milliseconds: 11_520_000) == "3 h 12 min")
        #expect(DurationText.describe(milliseconds: -7_200_000) == "2 h")
    }
}
