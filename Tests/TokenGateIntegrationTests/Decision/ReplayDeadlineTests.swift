import CDNTokens
import EntitlementTokens
import EntitlementTokensRedis
import Foundation
import HTTPTypes
import HummingbirdTesting
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// docs/DESIGN.md#one-deadline-per-replay-check: `--replay-timeout` is set once
/// and passed down; no layer narrows it. A store slower than it is cut at it,
/// never sooner, whichever store: one in the process that ignores
/// cancellation (the protocol's race bounds it) and a real Redis paused with
/// SIGSTOP (the connection's timer bounds it), for a media token and for a
/// one-time Common Access Token.
@Suite(.timeLimit(.minutes(5))) struct ReplayDeadlineTests {
    static let deadlineMilliseconds = 300
    static let deadline = Duration.milliseconds(deadlineMilliseconds)
    /// Answers `.accepted` after ten minutes and ignores cancellation: if the
    /// deadline did not cut it, the request would be allowed, or still waiting.
    struct StubbornStore: ReplayStore {
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 600) { continuation.resume(returning: .accepted) }
            }
        }
    }

    /// A media token and a one-time CAT through a gate with `store`, each cut at the deadline.
    func expectCutAtTheDeadline(_ store: any ReplayStore, _ what: String) async throws {
        let clock = GateFixtures.Clock()
        let arguments = [
            "--replay-timeout", "\(Self.deadlineMilliseconds)",
            "--cat-key", "\(CATGateFixtures.hmacPath) edge-1",
        ]
        let runtime = try GateRuntime(
            configuration: GateFixtures.configuration(arguments),
            logger: LogCapture().logger,
            clock: { clock.read() },
            keyPollInterval: .seconds(60),
            replay: .init(store: store)
        )
        let now = CATGateFixtures.seconds(clock.read())
        let once = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))])
        try await runtime.application().test(.router) { client in
            let requests: [(String, () async throws -> TestResponse)] = [
                ("media token", { try await client.authRequest("/a?token=\(GateFixtures.token())") }),
                ("one-time CAT", { try await client.authRequest("/hls/tnt/seg1.ts", headers: [CATGateFixtures.header: once]) }),
            ]
            for (kind, request) in requests {
                let start = ContinuousClock.now
                let answer = try await request()
                let elapsed = ContinuousClock.now - start
                #expect(answer.status == .serviceUnavailable, "\(what), \(kind)")
                #expect(answer.tokenStatus == "REPLAY_CHECK_UNAVAILABLE", "\(what), \(kind)")
                // No upper bound in seconds: with every suite running on two cores a
                // timer's resumption can wait a minute on other suites' work. The
                // 503 is the proof of the cut (the store would have allowed, a paused
                // Redis never answers), and the suite's time limit bounds a hang.
                #expect(elapsed >= Self.deadline, "\(what), \(kind): cut after \(elapsed), before the deadline")
            }
        }
    }

    @Test func aStoreThatKeepsNoDeadlineIsCutAtTheCallersDeadline() async throws {
        try await expectCutAtTheDeadline(StubbornStore(), "a store that ignores cancellation")
    }

    /// The store's own timeout (50 ms, for callers that name no deadline) is
    /// shorter than the gate's: the gate's deadline still holds, whole.
    @Test(.enabled(if: Integration.redis, "redis-server not installed"))
    func aPausedRedisIsCutAtTheCallersDeadlineNotTheStores() async throws {
        try await withRedisServer { server in
            var configuration = try RedisClientConfiguration(url: server.url)
            configuration.operationTimeout = .milliseconds(50)
            // A connection silent for `stalledConnectionTimeout` is closed with
            // every request it holds: a second, earlier cut (its own tests are
            // the state machine's). The media token's request is still out on
            // the paused connection when the CAT's is sent behind it, so on a
            // loaded machine the default second could close it before the
            // CAT's deadline. Kept out of the way: this test is about the deadline.
            configuration.stalledConnectionTimeout = .seconds(60)
            let store = RedisReplayStore(client: try RedisClient(configuration: configuration))
            // Connected and answering before the pause, so what is measured is
            // the pause (the precondition, not what is tested: a few tries on a loaded machine).
            let now = TokenTimestamp.now()
            var answered: [ReplayDecision] = []
            for attempt in 0..<10 where answered.last != .accepted {
                let warm = ReplayIdentity(digest: Array(repeating: UInt8(attempt), count: 32))
                answered.append(await store.accept(warm, until: now.adding(milliseconds: 60_000) ?? now, now: now, within: .seconds(2)))
            }
            #expect(answered.last == .accepted, "Redis never answered before the pause: \(answered)")
            server.pause()
            defer { server.resume() }
            try await expectCutAtTheDeadline(store, "a paused Redis")
            await store.shutdown()
        }
    }
}
