import Foundation
import Synchronization
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

    static let rss =
        #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>mun2</title><item><title><![CDATA[Dia 2]]></title><guid>2847811</guid></item></channel></rss>"#
    static let rssOtherItem = rss.replacingOccurrences(of: "2847811", with: "999")
    static let rssNoItem = #"<rss version="2.0"><channel><title>mun2</title></channel></rss>"#
    static let rssOtherChannel = rss.replacingOccurrences(of: "mun2", with: "TNT")

    @Test(arguments: [
        ("TNT", "TNT", true),
        ("TNT", "CNN", false),
        ("mun2", rss, true),  // bare id = channel title
        (rss, "mun2", true),
        (rss, rss, true),
        (rss, rssOtherItem, false),  // same channel, different item
        (rss, rssNoItem, true),  // one side names no item
        (rssNoItem, rss, true),
        (rss, rssOtherChannel, false),  // different channel
        ("TNT", rssOtherChannel, true),
        ("tnt", "TNT", false),  // case matters
        ("<not rss>", "<not rss>", true),  // opaque, exactly equal
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
    }

    /// docs/DESIGN.md#the-rules-of-the-checks: an authentication token that names no resource grants none.
    @Test func anAuthenticationTokenNamingNoResourceFailsAResourceCheck() {
        var bare = Minting.request(.authentication)
        bare.resourceID = nil
        let token = Minting.token(bare)
        let verdict = Minting.verifier { $0.resourceID = "CNN" }.verify(token)
        #expect(verdict.status == .invalidResourceID)
        #expect(verdict.reason.contains("names no resource"))
        #expect(verdict.checksRun.contains(.resource))
        // Without a configured resource the check is skipped, as any other.
        #expect(Minting.verifier().verify(token).status == .validToken)
    }

    /// A signed authentication token whose authorized resources are `resources` (attribute values, escaped).
    static func authenticationToken(resources: [String]) throws -> String {
        let escaped = resources.map {
            $0.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        let list = escaped.map { #"<simpleAuthorizedResource simpleResourceID="\#($0)"/>"# }.joined()
        let expires = Minting.at(420_000).formatted(.slashedGMTOffset)
        let element = Fixtures.authenticationElement(expires: expires, extra: "<simpleAuthorizedResources>\(list)</simpleAuthorizedResources>")
        let signature = Base64.encode(try Minting.key().signature(for: Array(element.utf8)))
        return "<signatureInfo>\(signature)<signatureInfo>\(element)"
    }

    /// docs/DESIGN.md#the-rules-of-the-checks: an authentication token's authorized resources are read Media-RSS-aware like any other.
    @Test func authenticationResourcesAreReadAsMediaRSS() throws {
        let token = try Self.authenticationToken(resources: ["CNN", Self.rss])
        #expect(try Fixtures.decode(token).token.resourceID == nil)
        for (expected, status) in [
            ("mun2", VerificationStatus.validToken), (Self.rss, .validToken), (Self.rssNoItem, .validToken),
            ("CNN", .validToken), (Self.rssOtherItem, .invalidResourceID), ("TNT", .invalidResourceID),
        ] {
            let verdict = Minting.verifier { $0.resourceID = expected }.verify(token)
            #expect(verdict.status == status, "\(expected): \(verdict.reason)")
        }
        let refused = Minting.verifier { $0.resourceID = Self.rssOtherItem }.verify(token)
        #expect(refused.reason.contains("2 authorized resources"))
        #expect(refused.reason.contains("item guid '2847811'"))
        #expect(refused.reason.contains("expected item guid '999'"))
    }

    static let rssTwoItems = rss.replacingOccurrences(of: "</item>", with: "</item><item><title>Dia 3</title><guid>2847812</guid></item>")
    static let rssTwoChannels = rss.replacingOccurrences(of: "</channel>", with: "</channel><channel><title>TNT</title></channel>")
    static let rssTwoTitles = rss.replacingOccurrences(of: "<title>mun2</title>", with: "<title>mun2</title><title>TNT</title>")
    static let rssTwoGUIDs = rss.replacingOccurrences(of: "<guid>2847811</guid>", with: "<guid>2847811</guid><guid>1</guid>")
    static let rssEmptySecondChannel = rss.replacingOccurrences(of: "</channel>", with: "</channel><channel/>")
    static let rssTwoItemsOneEmpty = rss.replacingOccurrences(of: "</item>", with: "</item><item><link>x</link></item>")

    /// docs/DESIGN.md#the-rules-of-the-checks: ambiguous Media RSS is never matched Media-RSS-aware (which item
    /// was meant cannot be told), only byte for byte; the reason says so.
    @Test(arguments: [rssTwoItems, rssTwoChannels, rssTwoTitles, rssTwoGUIDs, rssEmptySecondChannel, rssTwoItemsOneEmpty])
    func ambiguousMediaRSSMatchesOnlyExactly(ambiguous: String) throws {
        for kind in [TokenKind.media, .authorization] {
            let token = Minting.token(Minting.request(kind, resource: ambiguous))
            for expected in ["mun2", Self.rss, "TNT"] {
                let verdict = Minting.verifier { $0.resourceID = expected }.verify(token)
                #expect(verdict.status == .invalidResourceID, "\(kind) vs \(expected)")
                #expect(verdict.reason.contains("ambiguous"), "\(verdict.reason)")
            }
            #expect(Minting.verifier { $0.resourceID = ambiguous }.verify(token).status == .validToken)
            let decoded = try Fixtures.decode(token)
            #expect(decoded.mediaRSS == nil)
            #expect(decoded.warnings.contains { $0.contains("ambiguous") })
        }
        // As the expectation, too.
        let plain = Minting.token(Minting.request(resource: "mun2"))
        let verdict = Minting.verifier { $0.resourceID = ambiguous }.verify(plain)
        #expect(verdict.status == .invalidResourceID)
        #expect(verdict.reason.contains("ambiguous"))
        // And in an authentication token's list.
        let authN = try Self.authenticationToken(resources: [ambiguous])
        #expect(Minting.verifier { $0.resourceID = "mun2" }.verify(authN).reason.contains("ambiguous"))
        #expect(Minting.verifier { $0.resourceID = ambiguous }.verify(authN).status == .validToken)
    }

    /// A reason names what differs, never two things that read the same.
    @Test func reasonsNeverContradictThemselves() {
        let channelTNT = #"<rss version="2.0"><channel><title>TNT</title><item><guid>42</guid></item></channel></rss>"#
        let expectedItem = channelTNT.replacingOccurrences(of: "42", with: "43")
        let verdict = Minting.verifier { $0.resourceID = expectedItem }.verify(Minting.token(Minting.request(resource: channelTNT)))
        #expect(verdict.status == .invalidResourceID)
        #expect(verdict.reason == "resource is item guid '42' of channel 'TNT', expected item guid '43'")
        // A bare id and an RSS channel of that title are the same resource.
        #expect(Minting.verifier { $0.resourceID = "TNT" }.verify(Minting.token(Minting.request(resource: channelTNT))).status == .validToken)
        let other = Minting.verifier { $0.resourceID = "CNN" }.verify(Minting.token(Minting.request(resource: channelTNT)))
        #expect(other.reason == "resource is channel 'TNT', expected channel 'CNN'")
    }

    /// Pairs that Swift's `==` calls equal and docs/DESIGN.md#ids-are-compared-byte-for-byte calls different ids.
    static let unicodeTwins: [(String, String)] = [("Caf\u{E9}", "Cafe\u{301}"), ("\u{212B}ngstr\u{F6}m", "\u{C5}ngstr\u{F6}m")]

    @Test(arguments: unicodeTwins)
    func idsAreComparedByteForByte(token tokenID: String, expected expectedID: String) throws {
        #expect(tokenID == expectedID)  // what Swift says; not what a verifier may say
        // Requestor.
        var request = Minting.request()
        request.requestorID = tokenID
        let requestor = Minting.verifier { $0.requestorID = expectedID }.verify(Minting.token(request))
        #expect(requestor.status == .invalidRequestorID)
        #expect(requestor.reason.contains("U+"), "the reason shows how the two differ: \(requestor.reason)")
        #expect(Minting.verifier { $0.requestorID = tokenID }.verify(Minting.token(request)).status == .validToken)
        // Resource, bare and as an RSS channel title and item guid.
        let bare = Minting.token(Minting.request(resource: tokenID))
        #expect(Minting.verifier { $0.resourceID = expectedID }.verify(bare).status == .invalidResourceID)
        #expect(Minting.verifier { $0.resourceID = tokenID }.verify(bare).status == .validToken)
        func rss(title: String, guid: String) -> String {
            #"<rss version="2.0"><channel><title>\#(title)</title><item><guid>\#(guid)</guid></item></channel></rss>"#
        }
        let titled = Minting.token(Minting.request(resource: rss(title: tokenID, guid: "1")))
        let byTitle = Minting.verifier { $0.resourceID = expectedID }.verify(titled)
        #expect(byTitle.status == .invalidResourceID)
        #expect(byTitle.reason.contains("U+"), "\(byTitle.reason)")
        #expect(Minting.verifier { $0.resourceID = tokenID }.verify(titled).status == .validToken)
        let guided = Minting.token(Minting.request(resource: rss(title: "T", guid: tokenID)))
        #expect(Minting.verifier { $0.resourceID = rss(title: "T", guid: expectedID) }.verify(guided).status == .invalidResourceID)
        #expect(Minting.verifier { $0.resourceID = rss(title: "T", guid: "\(tokenID)") }.verify(guided).status == .validToken)
        // An authentication token's authorized resource.
        let authN = try Self.authenticationToken(resources: [tokenID])
        #expect(Minting.verifier { $0.resourceID = expectedID }.verify(authN).status == .invalidResourceID)
        #expect(Minting.verifier { $0.resourceID = tokenID }.verify(authN).status == .validToken)
        // MVPD allow-list.
        var mvpd = Minting.request()
        mvpd.mvpdID = tokenID
        let untrusted = Minting.verifier { $0.allowedMVPDs = [expectedID, "Other"] }.verify(Minting.token(mvpd))
        #expect(untrusted.status == .untrustedMVPD)
        #expect(untrusted.reason.contains("U+"))
        #expect(Minting.verifier { $0.allowedMVPDs = [tokenID] }.verify(Minting.token(mvpd)).status == .validToken)
        // Both forms listed: both allowed (a Set<String> would have kept one).
        #expect(Minting.verifier { $0.allowedMVPDs = [expectedID, tokenID] }.verify(Minting.token(mvpd)).status == .validToken)
        #expect(Minting.verifier { $0.allowedMVPDs = [tokenID, expectedID] }.verify(Minting.token(mvpd)).status == .validToken)
    }

    /// Consecutive tokens share one reading of the same resource; a resource
    /// that is only canonically equivalent is not the same resource.
    @Test(arguments: unicodeTwins)
    func aDecoderDoesNotShareAReadingBetweenUnicodeTwins(first: String, second: String) throws {
        func rss(_ title: String) -> String { "<rss><channel><title>\(title)</title></channel></rss>" }
        let decoder = TokenDecoder()
        let one = try decoder.decode(Minting.token(Minting.request(resource: rss(first))))
        let two = try decoder.decode(Minting.token(Minting.request(resource: rss(second))))
        #expect(one.mediaRSS.map { Array($0.channelTitle.utf8) } == Array(first.utf8))
        #expect(two.mediaRSS.map { Array($0.channelTitle.utf8) } == Array(second.utf8))
        let verifier = Minting.verifier { $0.resourceID = first }
        #expect(verifier.verify(Minting.token(Minting.request(resource: rss(first)))).status == .validToken)
        #expect(verifier.verify(Minting.token(Minting.request(resource: rss(second)))).status == .invalidResourceID)
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
        #expect(
            Minting.verifier {
                $0.replayStore = store
                $0.requestorID = "CNN"
            }.verify(token).status == .invalidRequestorID
        )
        #expect(Minting.verifier { $0.replayStore = store }.verify(token).status == .validToken)
    }

    @Test func theReplayStoreForgetsExpiredEntriesAndStaysBounded() {
        // The monotonic clock keeps pace with the wall clock, as when nobody steps it.
        let monotonic = Mutex<Int64>(0)
        let store = InMemoryReplayStore(capacity: 3) { monotonic.withLock { $0 } }
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
        monotonic.withLock { $0 = 9500 }
        #expect(store.acceptWithoutWaiting(identity(5), until: Minting.at(20_000), now: Minting.at(9500)) == .accepted)
        #expect(store.count == 1)
    }

    /// docs/DESIGN.md#clocks-and-one-time-use: an entry goes only when both clocks say so. The
    /// wall clock (the caller's `now`) steps an hour forward and back while
    /// the monotonic one runs on; the entry is kept through both steps, and
    /// forgotten once the wall clock is past `until` and the monotonic clock
    /// past `until − now` from the write.
    @Test func anEntryOutlivesAnHourStepOfTheWallClockEitherWay() {
        let monotonic = Mutex<Int64>(0)
        func advance(_ milliseconds: Int64) { monotonic.withLock { $0 += milliseconds } }
        let store = InMemoryReplayStore(capacity: 10) { monotonic.withLock { $0 } }
        let hour: Int64 = 3_600_000
        let token = ReplayIdentity(digest: [1])
        var other: UInt8 = 2
        /// Asks about a new identity at `now`: the store looks at what it may forget.
        func touch(at now: TokenTimestamp) {
            #expect(store.acceptWithoutWaiting(ReplayIdentity(digest: [other]), until: now, now: now) == .accepted)
            other += 1
        }
        // Accepted with 60 s left by the wall clock.
        #expect(store.acceptWithoutWaiting(token, until: Minting.at(60_000), now: Minting.at(0)) == .accepted)

        // Forward an hour, then back: judged by the wall clock alone, the entry
        // went at the first step, and the token played again after the second.
        advance(1_000)
        touch(at: Minting.at(hour + 1_000))
        advance(1_000)
        #expect(store.acceptWithoutWaiting(token, until: Minting.at(60_000), now: Minting.at(2_000)) == .replayed)

        // Back an hour: 61 s later by the monotonic clock its own time is up,
        // but the wall clock says the token could be accepted again (and the
        // verifier would): judged by the monotonic clock alone, it went.
        advance(59_000)
        touch(at: Minting.at(61_000 - hour))
        #expect(store.acceptWithoutWaiting(token, until: Minting.at(60_000), now: Minting.at(61_000 - hour)) == .replayed)
        // Still there while the wall clock, an hour behind, reaches `until`…
        advance(hour - 1_000)
        touch(at: Minting.at(60_000))
        #expect(store.acceptWithoutWaiting(token, until: Minting.at(60_000), now: Minting.at(60_000)) == .replayed)
        // …and gone once both clocks are past it.
        advance(1_001)
        let before = store.count
        touch(at: Minting.at(60_001))
        #expect(store.count < before, "nothing was forgotten")
        #expect(store.acceptWithoutWaiting(token, until: Minting.at(60_000), now: Minting.at(60_001)) == .accepted)
    }

    /// A large store is kept in shards (docs/PERFORMANCE.md: one table's rehash was
    /// the gate's p99); together they hold exactly the capacity, and each forgets
    /// its entries closest to expiring first.
    @Test func aLargeStoreIsShardedAndKeepsItsCapacityAndItsLatestEntries() {
        #expect(InMemoryReplayStore(capacity: 2047).shardCount == 1)
        #expect(InMemoryReplayStore(capacity: 2048).shardCount == 2)
        #expect(InMemoryReplayStore().shardCount == 64)
        // Both clocks stand still: the wall clock is the fixed `now` below.
        let store = InMemoryReplayStore(capacity: 65_536) { 0 }
        #expect(store.shardCount == 64)
        // SplitMix64: digests as evenly spread as SHA-256's.
        func identity(_ number: Int) -> ReplayIdentity {
            var state = UInt64(number) &+ 0x9E37_79B9_7F4A_7C15
            var bytes: [UInt8] = []
            for _ in 0..<4 {
                state = state &+ 0x9E37_79B9_7F4A_7C15
                var mixed = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                mixed ^= mixed >> 31
                bytes += withUnsafeBytes(of: mixed.bigEndian, Array.init)
            }
            return ReplayIdentity(digest: bytes)
        }
        let now = Minting.issued
        func decisions(_ numbers: Range<Int>) -> [ReplayDecision: Int] {
            numbers.reduce(into: [:]) { counts, number in
                counts[store.acceptWithoutWaiting(identity(number), until: Minting.at(1_000 + Int64(number)), now: now)!, default: 0] += 1
            }
        }
        #expect(decisions(0..<100_000) == [.accepted: 100_000])
        #expect(store.count == 65_536)
        // The latest are kept in every shard: each evicted only entries that expire sooner.
        #expect(decisions(99_000..<100_000) == [.replayed: 1_000])
    }

    /// The store keeps a SHA-256 identity's first 128 bits: each of those 16
    /// bytes counts (digests differing in one are two tokens), and a digest
    /// of another length is kept apart from the 32-byte one it prefixes.
    @Test func everyByteOfAnIdentitysKeyCountsInTheStore() {
        let store = InMemoryReplayStore()
        let now = Minting.issued
        let base = (0..<32).map { UInt8($0 &* 7 &+ 3) }
        #expect(store.acceptWithoutWaiting(ReplayIdentity(digest: base), until: Minting.at(1000), now: now) == .accepted)
        for position in 0..<16 {
            var other = base
            other[position] ^= 0x80
            #expect(
                store.acceptWithoutWaiting(ReplayIdentity(digest: other), until: Minting.at(1000), now: now) == .accepted,
                "byte \(position) was not part of the key"
            )
        }
        #expect(store.acceptWithoutWaiting(ReplayIdentity(digest: base), until: Minting.at(1000), now: now) == .replayed)
        #expect(store.acceptWithoutWaiting(ReplayIdentity(digest: base + [0]), until: Minting.at(1000), now: now) == .accepted)
        #expect(store.acceptWithoutWaiting(ReplayIdentity(digest: Array(base.prefix(31))), until: Minting.at(1000), now: now) == .accepted)
        #expect(store.count == 19)
    }

    @Test func durationsReadLikeAPersonWouldSayThem() {
        #expect(DurationText.describe(milliseconds: 250) == "250 ms")
        #expect(DurationText.describe(milliseconds: 41_000) == "41 s")
        #expect(DurationText.describe(milliseconds: 250_000) == "4 min 10 s")
        #expect(DurationText.describe(milliseconds: 11_520_000) == "3 h 12 min")
        #expect(DurationText.describe(milliseconds: -7_200_000) == "2 h")
    }
}
