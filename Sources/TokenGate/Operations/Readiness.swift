import Synchronization

/// What `GET /readyz` answers: ready while keys are loaded, the replay store
/// answers, and the gate is not shutting down (SPEC §9). On SIGTERM readiness
/// turns 503 first, so a load balancer stops sending before the server stops
/// accepting.
final class Readiness: Sendable {
    private let draining = Atomic<Bool>(false)
    private let keysLoaded = Atomic<Int>(0)
    private let replayProbe: @Sendable () async -> String?

    init(replayProbe: @escaping @Sendable () async -> String?) {
        self.replayProbe = replayProbe
    }

    func setKeysLoaded(_ count: Int) { keysLoaded.store(count, ordering: .relaxed) }
    func startDraining() { draining.store(true, ordering: .relaxed) }
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// nil when ready; otherwise why not.
    func notReadyReason() async -> String? {
        if draining.load(ordering: .relaxed) { return "shutting down" }
        if keysLoaded.load(ordering: .relaxed) == 0 { return "no trusted keys loaded" }
        if let reason = await replayProbe() { return "replay store: \(reason)" }
        return nil
    }
}
