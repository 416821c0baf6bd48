import EntitlementTokens
import Synchronization

/// The only place the gate calls the library's verifier.
///
/// It holds what is the same for every request (requestor, MVPD allow-list,
/// leeway, clock, replay store) and the key ring, which ``replaceKeys(with:)``
/// swaps atomically while requests are served: a request verifies with the
/// ring it started with, the next with the new one.
///
/// Today's library fixes the expected resource and device in the verifier's
/// policy, so one `TokenVerifier` is kept per (resource, device) seen, bounded
/// (``maximumVerifiers``, then the set starts again). When the library's
/// per-request `verify(_:expecting:)` lands (SPEC §8), this type becomes one
/// verifier and one call; nothing else in the gate changes.
final class GateVerifier: Sendable {
    struct Expectations: Hashable {
        var resource: String?
        var deviceID: String?
    }

    private struct State {
        var ring: KeyRing
        /// Counts reloads, so a verifier built from an older ring is never kept.
        var generation = 0
        var verifiers: [Expectations: TokenVerifier] = [:]
    }

    static let maximumVerifiers = 1024

    private let policy: VerificationPolicy
    private let state: Mutex<State>

    /// `policy` holds the requestor, MVPDs, leeway, replay store and clock;
    /// its resource and device are ignored (they come with each request).
    init(ring: KeyRing, policy: VerificationPolicy) {
        var policy = policy
        policy.resourceID = nil
        policy.device = nil
        self.policy = policy
        state = Mutex(State(ring: ring))
    }

    var keyCount: Int { state.withLock { $0.ring.keys.count } }

    func replaceKeys(with ring: KeyRing) {
        state.withLock { state in
            state.ring = ring
            state.generation += 1
            state.verifiers.removeAll()
        }
    }

    /// The verdict for one token, for a request for `resource` from `deviceID`
    /// (nil: that check is skipped).
    func verdict(for bytes: some Collection<UInt8>, resource: String?, deviceID: String?) async -> Verdict {
        verifier(for: Expectations(resource: resource, deviceID: deviceID)).verify(bytes)
    }

    private func verifier(for expectations: Expectations) -> TokenVerifier {
        if let verifier = state.withLock({ $0.verifiers[expectations] }) { return verifier }
        let (ring, generation) = state.withLock { ($0.ring, $0.generation) }
        var policy = self.policy
        policy.resourceID = expectations.resource
        policy.device = expectations.deviceID.map { .deviceID($0) }
        let verifier = TokenVerifier(signature: .trustedKeys(ring), policy: policy)
        state.withLock { state in
            // A reload between the two locks: keep the new ring's verifiers only.
            guard state.generation == generation else { return }
            if state.verifiers.count >= Self.maximumVerifiers { state.verifiers.removeAll() }
            state.verifiers[expectations] = verifier
        }
        return verifier
    }
}
