/// A token whose signature a trusted key verified and that passed every
/// configured check. Only ``TokenVerifier`` can make one, so a function that
/// takes a `VerifiedToken` cannot be handed an unchecked token by mistake.
public struct VerifiedToken: Sendable {
    public let decoded: DecodedToken
    /// The trusted key that verified it; nil only when signature checking was
    /// switched off with ``SignatureRequirement/insecureSkipped``.
    public let key: PublicKey?

    init(decoded: DecodedToken, key: PublicKey?) {
        self.decoded = decoded
        self.key = key
    }

    public var token: EntitlementToken { decoded.token }
}

/// The answer for one token: a status, why, and what was checked.
public struct Verdict: Sendable {
    public var status: VerificationStatus
    /// For people: what failed and by how much, or what passed.
    public var reason: String
    /// The decoded token, whether or not it passed (nil when it could not be decoded).
    public var token: DecodedToken?
    /// Why decoding failed, for ``VerificationStatus/invalidTokenFormat``.
    public var formatError: TokenError?
    /// Non-nil exactly when ``status`` is ``VerificationStatus/validToken``.
    public var verified: VerifiedToken?
    /// The trusted key whose signature check passed, if one did.
    public var key: PublicKey?
    /// Checks that ran, in order, up to and including the one that failed.
    public var checksRun: [VerificationCheck]
    /// Checks that were not configured (or do not apply to this token's kind), with why.
    public var checksSkipped: [(check: VerificationCheck, reason: String)]

    public var isValid: Bool { status == .validToken }
}
