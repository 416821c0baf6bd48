/// `TOKEN_REPLAYED` when the same media token was already accepted.
///
/// It runs last, so a token refused for any other reason never uses up its
/// one acceptance. A token's identity is the SHA-256 of its signed bytes:
/// the same token re-encoded (raw, Base64, percent) is still the same token.
/// Authentication and authorization tokens are meant to be reused, so the
/// check applies to media tokens only.
struct ReplayPolicy: TokenPolicy {
    var store: any ReplayStore
    var leewayMilliseconds: Int64
    var check: VerificationCheck { .replay }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        guard token.kind == .media else { return .skip("only media tokens are one-time use") }
        let identity = token.signedBytes.withUnsafeBytes { ReplayIdentity(sha256Of: $0) }
        let forgetAfter = token.token.expiresAt.adding(milliseconds: leewayMilliseconds) ?? .latest
        guard let decision = store.acceptWithoutWaiting(identity, until: forgetAfter, now: now) else {
            return .fail(.replayCheckUnavailable, "the replay store answers only asynchronously; verify with the async API")
        }
        return Self.result(of: decision)
    }

    static func result(of decision: ReplayDecision) -> PolicyResult {
        switch decision {
        case .accepted: .pass
        case .replayed: .fail(.tokenReplayed, "this media token was already accepted once")
        case .unavailable(let why): .fail(.replayCheckUnavailable, "the one-time-use check could not be made: \(why)")
        }
    }
}
