/// `TOKEN_REPLAYED` when the same media token was already accepted;
/// `REPLAY_CHECK_UNAVAILABLE` when the store could not say (fail closed).
///
/// It runs last, so a token refused for any other reason never uses up its
/// one acceptance. A token's identity is the SHA-256 of its signed bytes:
/// the same token re-encoded (raw, Base64, percent) is still the same token.
/// Authentication and authorization tokens are meant to be reused, so the
/// check applies to media tokens only. The verifier asks the store itself
/// (it may have to wait for it); this type says what to ask and what the
/// answer means.
struct ReplayPolicy: Sendable {
    var store: any ReplayStore
    var leewayMilliseconds: Int64

    enum Question {
        case skip(String)
        case ask(ReplayIdentity, until: TokenTimestamp)
    }

    /// `digest` is the one the signature check left (hashed here only when no
    /// key hashed the signed bytes: Ed25519, signatures not checked).
    func pending(for token: DecodedToken, digest: inout SignedMessageDigest) -> Question {
        guard token.kind == .media else { return .skip("only media tokens are one-time use") }
        let identity = ReplayIdentity(sha256: digest.bytes(of: token.signedBytes.span))
        return .ask(identity, until: token.token.expiresAt.adding(milliseconds: leewayMilliseconds) ?? .latest)
    }

    /// The refusal a store's decision means, or nil for an acceptance.
    static func refusal(for decision: ReplayDecision) -> (status: VerificationStatus, reason: String)? {
        switch decision {
        case .accepted: nil
        case .replayed: (.tokenReplayed, "this media token was already accepted once")
        case .unavailable(let why): (.replayCheckUnavailable, "the one-time-use check could not be made: \(why)")
        }
    }
}
