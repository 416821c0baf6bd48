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
    private let events: any DecisionEvents
    private let logger: Logger

    init(_ inner: any ReplayStore, timeout: Duration, failure: ReplayFailureMode, events: any DecisionEvents, logger: Logger) {
        self.inner = inner
        self.timeout = timeout
        self.failure = failure
        self.events = events
        self.logger = logger
    }

    /// Within `--replay-timeout`: the one deadline there is when the caller names none.
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        await accept(identity, until: until, now: now, within: timeout)
    }

    /// The verifier's deadline and `--replay-timeout` as one (the sooner),
    /// kept by the inner store: Redis's connection timer, or the protocol's
    /// default race for a store that keeps none.
    func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        within deadline: Duration
    ) async -> ReplayDecision {
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
        logger.warning(
            "replay check unavailable: token accepted (--replay-failure open)",
            metadata: ["reason": .string(reason), "token_id": .string(tokenID)]
        )
        return .accepted
    }
}
