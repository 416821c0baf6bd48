import EntitlementTokens
import Synchronization

/// The only place the gate calls the library's verifier (docs/DESIGN.md#the-library-api-for-servers): one
/// `TokenVerifier` built at start-up with what is the same for every request
/// (requestor, MVPD allow-list, leeway, clock, replay store), asked per
/// request with that request's resource and device, its keys swapped
/// atomically by reloads while requests are served.
///
/// A second verifier, without the replay store, answers `POST /v1/verify`:
/// a report for a caller or the debugger never spends a one-time token that a
/// player still has to present to the auth endpoints.
final class GateVerifier: Sendable {
    private let verifier: TokenVerifier
    private let reporting: TokenVerifier
    private let reportPolicy: VerificationPolicy
    private let keyIDs: Mutex<Set<UInt64>>

    init(ring: KeyRing, policy: VerificationPolicy) {
        keyIDs = Mutex(Self.ids(of: ring))
        verifier = TokenVerifier(signature: .trustedKeys(ring), policy: policy)
        var reportPolicy = policy
        reportPolicy.replayStore = nil
        self.reportPolicy = reportPolicy
        reporting = TokenVerifier(signature: .trustedKeys(ring), policy: reportPolicy)
    }

    /// The verifier of the report endpoints, reading "now" from `now` when given
    /// (a caller re-checking a captured token), with the keys in force.
    func reportVerifier(now: TokenTimestamp?) -> TokenVerifier {
        guard let now else { return reporting }
        var policy = reportPolicy
        policy.clock = { now }
        return TokenVerifier(signature: reporting.signature, policy: policy)
    }

    /// The keys in force (the debugger builds its own verifier from them, per request).
    var signature: SignatureRequirement { reporting.signature }

    var keyCount: Int {
        if case .trustedKeys(let ring) = verifier.signature { return ring.keys.count }
        return 0
    }

    /// Trusts `ring` from the next verification on; a ring with no key is refused (the old one stays).
    func replaceKeys(with ring: KeyRing) throws(KeyError) {
        try verifier.replaceKeys(with: ring)
        try reporting.replaceKeys(with: ring)
        keyIDs.withLock { $0 = Self.ids(of: ring) }
    }

    /// The session key ids (``PlaybackSessions/keyID(of:)``) of the keys in
    /// force: a session whose admitting key left the ring ends with it.
    var trustedKeyIDs: Set<UInt64> { keyIDs.withLock { $0 } }

    private static func ids(of ring: KeyRing) -> Set<UInt64> {
        Set(ring.keys.map(PlaybackSessions.keyID(of:)))
    }

    /// The verdict for one token, for a request for `resource` from `deviceID`
    /// (nil: that check is skipped and the verdict says so), judged at the
    /// request's `now`.
    func verdict(for bytes: some Collection<UInt8>, resource: String?, deviceID: String?, now: TokenTimestamp) async -> Verdict {
        await verifier.verify(bytes, expecting: RequestExpectations(resourceID: resource, device: deviceID.map { .deviceID($0) }, now: now))
    }
}
