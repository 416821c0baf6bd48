import EntitlementTokens
import Synchronization

/// What `GET /readyz` answers: ready while keys are loaded, the replay store
/// answers, and the gate is not shutting down (docs/DESIGN.md#readiness). On SIGTERM readiness
/// turns 503 first, so a load balancer stops sending before the server stops
/// accepting.
final class Readiness: Sendable {
    private let draining = Atomic<Bool>(false)
    private let keysLoaded = Atomic<Int>(0)
    private let replayProbe: @Sendable () async -> String?
    private let sampleKeys = Mutex<String?>(nil)

    init(replayProbe: @escaping @Sendable () async -> String?) {
        self.replayProbe = replayProbe
    }

    func setKeysLoaded(_ count: Int) { keysLoaded.store(count, ordering: .relaxed) }

    /// The keys now trusted: their number, and whether any is one of the
    /// repository's sample keys (``sampleKeyWarning``).
    func setTrustedKeys(_ keys: [PublicKey]) {
        setKeysLoaded(keys.count)
        sampleKeys.withLock { $0 = Self.sampleKeyWarning(keys) }
    }

    /// Set while the gate trusts a key of `Samples/keys`: `/readyz` still
    /// answers 200, with this warning in its body, and the start-up log and
    /// each reload say it too (docs/DESIGN.md#operators).
    var sampleKeyWarning: String? { sampleKeys.withLock { $0 } }

    /// nil when no key of `keys` is a sample key.
    static func sampleKeyWarning(_ keys: [PublicKey]) -> String? {
        let samples = keys.compactMap { key in SampleKeys.name(of: key).map { "\($0) (\(key.source))" } }
        guard !samples.isEmpty else { return nil }
        return "trusting a sample key of the tokeninspect repository: " + samples.joined(separator: ", ")
            + ". Its private key is published, so anyone can mint tokens this gate accepts: trust only your issuer's keys"
    }
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
