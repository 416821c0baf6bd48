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
    private let metrics: GateMetrics
    private let logger: Logger

    init(_ inner: any ReplayStore, timeout: Duration, failure: ReplayFailureMode, metrics: GateMetrics, logger: Logger) {
        self.inner = inner
        self.timeout = timeout
        self.failure = failure
        self.metrics = metrics
        self.logger = logger
    }

    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        // A store that can answer at once (in memory) pays for no task.
        if let decision = acceptWithoutWaiting(identity, until: until, now: now) { return decision }
        let start = ContinuousClock.now
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
        metrics.replayDuration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        return settle(decision, identity)
    }

    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        guard let decision = inner.acceptWithoutWaiting(identity, until: until, now: now) else { return nil }
        return settle(decision, identity)
    }

    private func settle(_ decision: ReplayDecision, _ identity: ReplayIdentity) -> ReplayDecision {
        metrics.countReplay(decision)
        guard case .unavailable(let reason) = decision, failure == .open else { return decision }
        metrics.replayFailOpen.increment()
        let tokenID = Digest.tokenID(digest: identity.digest)
        logger.warning("replay check unavailable: token accepted (--replay-failure open)",
                       metadata: ["reason": .string(reason), "token_id": .string(tokenID)])
        return .accepted
    }
}

/// Makes the replay store `--replay` names: the seam where the shared Redis
/// store (SPEC §10, product `EntitlementTokensRedis`) plugs in.
enum ReplayStoreFactory {
    struct Made {
        var store: (any ReplayStore)?
        /// nil when the store answers; otherwise why not (for `/readyz`).
        var probe: @Sendable () async -> String?
    }

    static func make(_ setting: ReplaySetting) throws(GateConfigurationError) -> Made {
        switch setting {
        case .off:
            return Made(store: nil, probe: { nil })
        case .memory:
            return Made(store: InMemoryReplayStore(), probe: { nil })
        case .redis:
            throw GateConfigurationError(
                "--replay redis://…: the shared Redis replay store is not yet available in this build; use --replay memory (one server) until it is")
        }
    }
}
