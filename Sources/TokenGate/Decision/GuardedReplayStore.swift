import EntitlementTokens
import Logging

/// The replay store as the gate uses it: the deadline of `--replay-timeout`,
/// the metrics of every operation, and `--replay-failure open`.
///
/// Fail open is the labelled insecure door: a store that cannot answer makes
/// the token accepted, counted in `tokengate_replay_fail_open_total` and
/// logged with its id. The default (closed) keeps `.unavailable`, which the
/// verifier turns into `REPLAY_CHECK_UNAVAILABLE` (503).
final class GuardedReplayStore: ReplayStore {
    let inner: any ReplayStore
    let timeout: Duration
    let failure: ReplayFailureMode
    /// The inner store answers within `timeout` by itself (Redis: the
    /// timeout is its per-operation deadline), so no timer task is needed.
    let innerKeepsDeadline: Bool
    private let events: any DecisionEvents
    private let logger: Logger

    init(_ inner: any ReplayStore, timeout: Duration, failure: ReplayFailureMode, innerKeepsDeadline: Bool = false,
         events: any DecisionEvents, logger: Logger) {
        self.inner = inner
        self.timeout = timeout
        self.failure = failure
        self.innerKeepsDeadline = innerKeepsDeadline
        self.events = events
        self.logger = logger
    }

    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        // The verifier asked acceptWithoutWaiting first: a store that answers
        // at once (in memory) never gets here.
        let start = ContinuousClock.now
        if innerKeepsDeadline {
            // Two child tasks a token would cost a measurable share of a
            // request; the Redis client's own deadline bounds this await.
            let decision = await inner.accept(identity, until: until, now: now)
            return settle(decision, identity, duration: ContinuousClock.now - start)
        }
        let inner = self.inner
        let timeout = self.timeout
        let decision = await withTaskGroup(of: ReplayDecision?.self) { group in
            group.addTask { await inner.accept(identity, until: until, now: now) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .unavailable("the replay store did not answer within \(timeout)")
        }
        return settle(decision, identity, duration: ContinuousClock.now - start)
    }

    /// The verifier's deadline and `--replay-timeout` as one (the sooner),
    /// kept by the inner store: Redis's connection timer, or the protocol's
    /// default race for a store that keeps none.
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp,
                within deadline: Duration) async -> ReplayDecision {
        let start = ContinuousClock.now
        let decision = await inner.accept(identity, until: until, now: now, within: min(deadline, timeout))
        return settle(decision, identity, duration: ContinuousClock.now - start)
    }

    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        guard let decision = inner.acceptWithoutWaiting(identity, until: until, now: now) else { return nil }
        return settle(decision, identity, duration: nil)
    }

    private func settle(_ decision: ReplayDecision, _ identity: ReplayIdentity, duration: Duration?) -> ReplayDecision {
        events.replayStore(decision, duration: duration)
        guard case .unavailable(let reason) = decision, failure == .open else { return decision }
        events.replayFailedOpen()
        let tokenID = Digest.tokenID(digest: identity.digest)
        logger.warning("replay check unavailable: token accepted (--replay-failure open)",
                       metadata: ["reason": .string(reason), "token_id": .string(tokenID)])
        return .accepted
    }
}
