/// What a server expects of every token, fixed when it starts: the requestor
/// (its site or app), the MVPDs it trusts, the tolerated clock skew, the clock
/// and the replay store. What differs per request — the resource and the
/// device — is a ``RequestExpectations`` given to each `verify` call.
///
/// Every expectation left nil is a check that is skipped (and reported as
/// skipped in the verdict).
public struct VerificationPolicy: Sendable {
    /// The device expectation type, by its older name.
    public typealias DeviceExpectation = EntitlementTokens.DeviceExpectation

    public var requestorID: String?
    /// The MVPDs whose tokens are accepted, compared byte for byte; nil accepts
    /// any. A list, not a `Set<String>`: a set would merge names that are
    /// canonically equivalent (two Unicode forms of one name) before the
    /// byte-exact check ever saw them.
    public var allowedMVPDs: [String]?
    /// Tolerated clock skew, each way, in milliseconds (default 30 s; 0 allowed).
    public var leewayMilliseconds: Int64 = 30_000
    /// One-time use of media tokens; nil skips the replay check.
    public var replayStore: (any ReplayStore)?
    /// How long an asynchronous `verify` waits for the replay store before
    /// answering `REPLAY_CHECK_UNAVAILABLE` (fail closed). The store's own
    /// timeouts still apply; this is the caller's deadline on top of them.
    public var replayDeadline: Duration = .milliseconds(250)
    /// "Now", injectable for tests and for re-checking captured tokens.
    public var clock: @Sendable () -> TokenTimestamp = TokenTimestamp.now

    public init(
        requestorID: String? = nil,
        allowedMVPDs: [String]? = nil,
        leewayMilliseconds: Int64 = 30_000,
        replayStore: (any ReplayStore)? = nil,
        replayDeadline: Duration = .milliseconds(250),
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now
    ) {
        self.requestorID = requestorID
        self.allowedMVPDs = allowedMVPDs
        self.leewayMilliseconds = leewayMilliseconds
        self.replayStore = replayStore
        self.replayDeadline = replayDeadline
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
