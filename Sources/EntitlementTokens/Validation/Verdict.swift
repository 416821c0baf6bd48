/// A token whose signature a trusted key verified and that passed every
/// configured check: the proof a valid ``Verdict`` carries (docs/DESIGN.md#the-librarys-habits).
///
/// Only ``TokenVerifier`` makes one, from the same decoded bytes the
/// signature covers, so a function that takes a `VerifiedToken` cannot be
/// handed an unchecked token by mistake, and no sequence of public calls
/// yields one for content no trusted key signed.
public struct VerifiedToken: Sendable, Equatable, CustomStringConvertible {
    /// The token as decoded.
    public let decoded: DecodedToken
    /// The trusted key that verified it; nil only when signature checking was
    /// switched off with ``SignatureRequirement/insecureSkipped``.
    public let key: PublicKey?

    init(decoded: DecodedToken, key: PublicKey?) {
        self.decoded = decoded
        self.key = key
    }

    /// The typed token.
    public var token: EntitlementToken { decoded.token }

    /// For logs: kind, root, requestor, resource, MVPD, expiry and the key —
    /// every id escaped, never the signature or the device fingerprint.
    public var description: String {
        let token = decoded.token
        var text = "\(token.kind.rawValue) token <\(token.root)> requestor \(TerminalText.quoted(token.requestorID))"
        if let resource = token.resourceID { text += " resource \(TerminalText.quoted(resource))" }
        if let mvpd = token.mvpdID { text += " mvpd \(TerminalText.quoted(mvpd))" }
        text += " expires \(token.expiresAt.iso8601)"
        text += key.map { ", verified by \($0.description)" } ?? ", signature NOT checked"
        return text
    }

    public static func == (lhs: VerifiedToken, rhs: VerifiedToken) -> Bool {
        lhs.decoded == rhs.decoded && lhs.key == rhs.key
    }
}

/// A check the verdict reports as not run, and why.
public struct SkippedCheck: Sendable, Hashable, Codable {
    /// The check that did not run.
    public let check: VerificationCheck
    /// Why it did not run.
    public let reason: String
    /// True when the check was configured but does not apply to this token
    /// (a device expected of a media token): people are told of these always,
    /// since they asked for the check.
    public let requested: Bool

    /// A skipped check and why; `requested` when the caller asked for it.
    public init(check: VerificationCheck, reason: String, requested: Bool = false) {
        self.check = check
        self.reason = reason
        self.requested = requested
    }
}

/// The answer for one token: a status, why, and what was checked.
///
/// Immutable, and made only by the verifier: ``verified`` is non-nil exactly
/// when ``status`` is ``VerificationStatus/validToken``. It is `Encodable`
/// (status, reason, checks, error, the verifying key) for logs and stores,
/// but not `Decodable`: a verdict read back from storage would be a
/// `VALID_TOKEN` without its proof.
public struct Verdict: Sendable, Equatable, CustomStringConvertible, Encodable {
    /// The status (docs/DESIGN.md#statuses).
    public let status: VerificationStatus
    /// For people: what failed and by how much, or what passed. It may quote
    /// input: escape it (``TerminalText``) before it reaches a terminal or log.
    public let reason: String
    /// The decoded token, whether or not it passed (nil when it could not be decoded).
    public let token: DecodedToken?
    /// Why decoding failed, for ``VerificationStatus/invalidTokenFormat``.
    public let formatError: TokenError?
    /// The proof, exactly when ``status`` is ``VerificationStatus/validToken``.
    public let verified: VerifiedToken?
    /// The trusted key whose signature check passed, if one did.
    public let key: PublicKey?
    /// Checks that ran, in order, up to and including the one that failed.
    public let checksRun: [VerificationCheck]
    /// Checks that were not configured (or do not apply to this token's kind), with why.
    public let checksSkipped: [SkippedCheck]
    /// The token's identity, the SHA-256 of its signed bytes, when this
    /// verification computed it: a trusted RSA or ECDSA key hashed them to
    /// check the signature, or the replay check asked a store with it. It is
    /// the identity the replay store was asked with, so a server can log the
    /// token or key anything by it without hashing the bytes again. Nil when
    /// nothing hashed them (no token, an Ed25519 key only, a signature of a
    /// length no trusted key makes, signatures not checked): then hash
    /// `token.signedBytes` if the identity is needed.
    public var identity: ReplayIdentity? { digest.computed.map { ReplayIdentity(sha256: $0) } }
    /// Kept inline, made into an identity only when asked: a verification
    /// that nobody asks it of (the CLI's) allocates nothing for it.
    let digest: SignedMessageDigest
    /// The decoded signature's length, when the signature check decoded it:
    /// reports show it (`signature.bytes`) without decoding the text again.
    let signatureByteCount: Int?

    /// True for `VALID_TOKEN`.
    public var isValid: Bool { status == .validToken }

    init(
        status: VerificationStatus,
        reason: String,
        token: DecodedToken?,
        key: PublicKey?,
        checksRun: [VerificationCheck],
        checksSkipped: [SkippedCheck],
        digest: SignedMessageDigest,
        signatureByteCount: Int? = nil
    ) {
        self.status = status
        self.reason = reason
        self.token = token
        self.formatError = nil
        self.verified = status == .validToken ? token.map { VerifiedToken(decoded: $0, key: key) } : nil
        self.key = key
        self.checksRun = checksRun
        self.checksSkipped = checksSkipped
        self.digest = digest
        self.signatureByteCount = signatureByteCount
    }

    /// The verdict for a token that could not be decoded.
    init(formatError error: TokenError) {
        status = .invalidTokenFormat
        reason = error.description
        token = nil
        formatError = error
        verified = nil
        key = nil
        checksRun = [.format]
        checksSkipped = []
        digest = SignedMessageDigest()
        signatureByteCount = nil
    }

    /// Two verdicts are equal when they say the same about the same token;
    /// ``identity`` is left out: it follows from the token, and whether it was
    /// computed depends on the keys tried, not on the answer.
    public static func == (lhs: Verdict, rhs: Verdict) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.token == rhs.token
            && lhs.formatError == rhs.formatError && lhs.verified == rhs.verified && lhs.key == rhs.key
            && lhs.checksRun == rhs.checksRun && lhs.checksSkipped == rhs.checksSkipped
    }

    /// `VALID_TOKEN: every configured check passed (…)`, escaped for a log line.
    public var description: String {
        "\(status.rawValue): \(TerminalText.escaped(reason))"
    }

    private enum CodingKeys: String, CodingKey {
        case status, reason, kind, root, checksRun, checksSkipped, error, verifiedBy
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encodeIfPresent(token?.kind.rawValue, forKey: .kind)
        try container.encodeIfPresent(token?.root, forKey: .root)
        try container.encode(checksRun, forKey: .checksRun)
        try container.encode(checksSkipped, forKey: .checksSkipped)
        try container.encodeIfPresent(formatError, forKey: .error)
        try container.encodeIfPresent(key?.description, forKey: .verifiedBy)
    }
}
