/// What a server expects of a token. Every expectation left nil is a check
/// that is skipped (and reported as skipped in the verdict).
public struct VerificationPolicy: Sendable {
    /// The device a token must be bound to.
    public enum DeviceExpectation: Sendable, Hashable {
        /// Compared with the token's fingerprint as given (lowercase hex).
        case fingerprint(String)
        /// Hashed with SHA-256, SHA-1 or MD5 — chosen by the length of the
        /// token's fingerprint (64, 40 or 32 hex digits) — then compared.
        case deviceID(String)
    }

    public var requestorID: String?
    /// A bare id or a Media RSS document; matched exactly or Media-RSS-aware.
    public var resourceID: String?
    /// The MVPDs whose tokens are accepted; nil accepts any.
    public var allowedMVPDs: Set<String>?
    public var device: DeviceExpectation?
    /// Tolerated clock skew, each way, in milliseconds (default 30 s; 0 allowed).
    public var leewayMilliseconds: Int64 = 30_000
    /// One-time use of media tokens; nil skips the replay check.
    public var replayStore: (any ReplayStore)?
    /// "Now", injectable for tests and for re-checking captured tokens.
    public var clock: @Sendable () -> TokenTimestamp = TokenTimestamp.now

    public init(
        requestorID: String? = nil,
        resourceID: String? = nil,
        allowedMVPDs: Set<String>? = nil,
        device: DeviceExpectation? = nil,
        leewayMilliseconds: Int64 = 30_000,
        replayStore: (any ReplayStore)? = nil,
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now
    ) {
        self.requestorID = requestorID
        self.resourceID = resourceID
        self.allowedMVPDs = allowedMVPDs
        self.device = device
        self.leewayMilliseconds = leewayMilliseconds
        self.replayStore = replayStore
        self.clock = clock
    }
}

/// How signatures are checked. There is no default that skips them.
public enum SignatureRequirement: Sendable {
    /// A token is valid only if one of these keys verifies its signed bytes.
    case trustedKeys(KeyRing)
    /// No signature check at all: for looking at tokens from a staging issuer
    /// whose key you do not have. Never for deciding playback.
    case insecureSkipped
}
