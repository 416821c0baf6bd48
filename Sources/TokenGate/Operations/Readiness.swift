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
    /// The CDN and CAT key files that are sample keys, by the set they belong to.
    private let sampleKeyFiles = Mutex<[String: [String]]>([:])
    /// Why the last reload failed, until one succeeds.
    private let reloadFailure = Mutex<String?>(nil)

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

    /// The key files of `set` (the CDN profiles, `--cat-key`) that are sample
    /// keys, named with their paths (``CDNSampleKeys``).
    func setSampleKeyFiles(_ named: [String], of set: String) {
        sampleKeyFiles.withLock { $0[set] = named }
    }

    /// Set while the gate trusts a key of `Samples/keys`, or signs or verifies
    /// CDN tokens with a key of `Samples/cdn`: `/readyz` still answers 200,
    /// with this warning in its body, and the start-up log and each reload
    /// say it too (docs/DESIGN.md#operators).
    var sampleKeyWarning: String? {
        let trusted = sampleKeys.withLock { $0 }
        let files = sampleKeyFiles.withLock { $0 }.sorted { $0.key < $1.key }.flatMap(\.value)
        let cdn =
            files.isEmpty
            ? nil
            : "A CDN key is a sample key of the tokeninspect repository: " + files.joined(separator: ", ")
                + ". Its secret is published, so anyone can make the CDN tokens this gate hands out or accepts: use your CDN's own keys"
        let warnings = [trusted, cdn].compactMap { $0 }
        return warnings.isEmpty ? nil : warnings.joined(separator: ". ")
    }

    /// nil when no key of `keys` is a sample key.
    static func sampleKeyWarning(_ keys: [PublicKey]) -> String? {
        let samples = keys.compactMap { key in SampleKeys.name(of: key).map { "\($0) (\(key.source))" } }
        guard !samples.isEmpty else { return nil }
        return "trusting a sample key of the tokeninspect repository: " + samples.joined(separator: ", ")
            + ". Its private key is published, so anyone can mint tokens this gate accepts: trust only your issuer's keys"
    }
    /// The last reload's failure (nil: it succeeded). The gate serves with the
    /// sets it had, so it stays ready; `/readyz` names the failure (``warning``).
    func setReloadFailure(_ why: String?) {
        reloadFailure.withLock { $0 = why }
    }

    /// What `/readyz` says beside a 200: a sample key in use, and a reload
    /// that failed and left the previous keys and secrets in use.
    var warning: String? {
        let failed = reloadFailure.withLock { $0 }.map { "the last reload failed, the previous keys and secrets stay in use: \($0)" }
        let warnings = [sampleKeyWarning, failed].compactMap { $0 }
        return warnings.isEmpty ? nil : warnings.joined(separator: ". ")
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
