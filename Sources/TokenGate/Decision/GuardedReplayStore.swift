import EntitlementTokens
import Logging

/// The replay store as the gate uses it: the metrics of every operation, and
/// `--replay-failure open`. It keeps no deadline of its own: the caller's
/// (`--replay-timeout`, computed once in `GateRuntime` and handed to the
/// verifier and the CAT origin) reaches the inner store as it was given, so a
/// timeout is the inner store's `.unavailable`, which the metrics and fail-open
/// see like any other.
///
/// Fail open is the labelled insecure door: a store that cannot answer makes
/// the token accepted, counted in `tokengate_replay_fail_open_total` and
/// logged with its id. The default (closed) keeps `.unavailable`, which the
/// verifier turns into `REPLAY_CHECK_UNAVAILABLE` (503).
final class GuardedReplayStore: ReplayStore {
    let inner: any ReplayStore
    let failure: ReplayFailureMode
    private let events: any DecisionEvents
    private let logger: Logger

    init(_ inner: any ReplayStore, failure: ReplayFailureMode, events: any DecisionEvents, logger: Logger) {
        self.inner = inner
        self.failure = failure
        self.events = events
        self.logger = logger
    }

    /// Within the inner store's own default, for a caller that names no deadline (the gate always names one).
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        let start = ContinuousClock.now
        let decision = await inner.accept(identity, until: until, now: now)
        return settle(decision, identity, duration: ContinuousClock.now - start)
    }

    /// Within the caller's deadline, kept by the inner store: Redis's
    /// connection timer, or the protocol's default race for a store that keeps none.
    func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        within deadline: Duration
    ) async -> ReplayDecision {
        let start = ContinuousClock.now
        let decision = await inner.accept(identity, until: until, now: now, within: deadline)
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
