import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// A gate whose wall clock steps an hour forward or back
/// (docs/DESIGN.md#clocks-and-one-time-use): each request's "now" is the wall clock, read
/// once; the in-memory replay store measures an entry's life on the monotonic
/// clock too, so no step forgets one early; sessions and the verdict cache
/// compare the wall clock with a credential's time, as a fresh verification
/// would, and so follow the step both ways.
@Suite struct WallClockStepTests {
    static let hour: Int64 = 3_600_000
    static let start = GateFixtures.at(60_000)

    static func gate(_ arguments: [String] = []) throws -> AuthGate {
        try GateRuntime(
            configuration: GateFixtures.configuration(arguments),
            logger: LogCapture().logger,
            // A year on: each decision reads the request's "now", never this.
            clock: { GateFixtures.at(365 * 86_400_000) },
            keyPollInterval: .seconds(60),
            // One shard (below 2,048 entries): a shard forgets only its own entries, so every token meets the same one.
            replay: ReplayStoreFactory.Made(store: InMemoryReplayStore(capacity: 1_000))
        ).gate
    }

    static func token(_ kind: TokenKind = .media, issued: TokenTimestamp = GateFixtures.issued) -> String {
        var request = GateFixtures.request(kind)
        request.issueTime = issued
        return GateFixtures.token(request)
    }

    static func decide(_ gate: AuthGate, token: String? = nil, session: String? = nil, at now: TokenTimestamp) async -> GateDecision {
        let path: Substring = "/hls/tnt/a.ts"
        var request = GateRequest(resource: "TNT", deviceID: nil, now: now)
        request.tokens = token.map { [.init(value: Substring($0), carrier: .query("token"))] } ?? []
        request.sessions = session.map { [.init(value: Substring($0), carrier: .cookie("tokengate_session"))] } ?? []
        request.originalPath = path
        request.originalURI = path
        return await gate.decide(request)
    }

    /// The wall clock steps an hour forward, a token valid then is accepted
    /// (the store is asked, and looks at what it may forget), and the clock
    /// steps back: the first token, valid again by the wall clock, is still
    /// remembered. Judged by the wall clock alone, the step forward had
    /// forgotten it, and the step back let it play twice.
    @Test func aStepForwardAndBackForgetsNoReplayEntry() async throws {
        let gate = try Self.gate()
        let first = Self.token()
        #expect(await Self.decide(gate, token: first, at: Self.start).status == .verdict(.validToken))
        let later = Self.token(issued: Self.start.adding(milliseconds: Self.hour)!)
        let forward = await Self.decide(gate, token: later, at: Self.start.adding(milliseconds: Self.hour + 1_000)!)
        #expect(forward.status == .verdict(.validToken), "\(forward.reason)")
        let back = await Self.decide(gate, token: first, at: Self.start.adding(milliseconds: 2_000)!)
        #expect(back.status == .verdict(.tokenReplayed), "\(back.reason)")
    }

    /// Stepped back an hour, the gate judges the token valid again, and the
    /// store, whose monotonic time for the entry has not passed either, refuses it.
    @Test func aStepBackKeepsTheEntryWhileTheTokenIsValidAgain() async throws {
        let gate = try Self.gate()
        let token = Self.token()
        #expect(await Self.decide(gate, token: token, at: Self.start).status == .verdict(.validToken))
        let back = await Self.decide(gate, token: token, at: Self.start.adding(milliseconds: -Self.hour)!)
        // An hour before the start is before the token's issue time, past the leeway.
        #expect(back.status == .verdict(.tokenNotYetValid), "\(back.reason)")
        let slightlyBack = await Self.decide(gate, token: token, at: Self.start.adding(milliseconds: -30_000)!)
        #expect(slightlyBack.status == .verdict(.tokenReplayed), "\(slightlyBack.reason)")
    }

    /// A session's expiry is a wall-clock time every gate sharing the secret
    /// reads: an hour's step past it ends it, a step back within it keeps it,
    /// on this gate as on any other.
    @Test func aSessionFollowsTheWallClockBothWays() async throws {
        let secrets = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: secrets) }
        let gate = try Self.gate(["--session-secret", GateFixtures.sessionSecret(in: secrets), "--session-lifetime", "3600"])
        let opened = await Self.decide(gate, token: Self.token(), at: Self.start)
        let session = try #require(opened.session, "\(opened.reason)")
        let forward = await Self.decide(gate, session: session, at: Self.start.adding(milliseconds: Self.hour + 60_000)!)
        #expect(forward.status == .sessionExpired, "\(forward.reason)")
        let back = await Self.decide(gate, session: session, at: Self.start.adding(milliseconds: 1_000)!)
        #expect(back.status == .validSession, "\(back.reason)")
    }

    /// The verdict cache serves an authorization token's allow only while
    /// the wall clock is before the token's expiry: stepped past it, the
    /// verifier speaks (expired); stepped back, the token is valid again,
    /// as a fresh verification says.
    @Test func theVerdictCacheFollowsTheWallClockBothWays() async throws {
        let gate = try Self.gate()
        // Issued at the fixtures' time, valid for an hour.
        let token = Self.token(.authorization)
        #expect(await Self.decide(gate, token: token, at: Self.start).status == .verdict(.validToken))
        #expect(await Self.decide(gate, token: token, at: Self.start).status == .verdict(.validToken))
        let forward = await Self.decide(gate, token: token, at: Self.start.adding(milliseconds: Self.hour)!)
        #expect(forward.status == .verdict(.tokenExpired), "\(forward.reason)")
        let back = await Self.decide(gate, token: token, at: Self.start.adding(milliseconds: 1_000)!)
        #expect(back.status == .verdict(.validToken), "\(back.reason)")
    }
}
