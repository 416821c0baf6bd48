import EntitlementTokens

/// A replay store that never answers in time: what a shared store that is
/// down looks like to the gate.
struct SilentReplayStore: ReplayStore {
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        try? await Task.sleep(for: .seconds(10))
        return .accepted
    }
}

/// A replay store that refuses every write (Redis `OOM` under `noeviction`).
struct RefusingReplayStore: ReplayStore {
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        .unavailable("OOM command not allowed")
    }
    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        .unavailable("OOM command not allowed")
    }
}
