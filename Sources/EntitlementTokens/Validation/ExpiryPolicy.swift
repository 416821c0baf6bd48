/// `TOKEN_EXPIRED` when now > expiry + leeway. Expiry is `issueTime + ttl`
/// for media tokens, `simpleTokenExpires` for authN and `simpleTokenTTL` for authZ.
struct ExpiryPolicy: TokenPolicy {
    var leewayMilliseconds: Int64
    var check: VerificationCheck { .expiry }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        let expiry = token.token.expiresAt
        let late = now.millisecondsSince1970 - expiry.millisecondsSince1970
        guard late > leewayMilliseconds else { return .pass }
        return .fail(
            .tokenExpired,
            "expired \(DurationText.describe(milliseconds: late)) ago (at \(expiry.iso8601); leeway \(DurationText.describe(milliseconds: leewayMilliseconds)))"
        )
    }
}

/// `TOKEN_NOT_YET_VALID` when a media token's issueTime > now + leeway:
/// the issuer's clock is ahead, or the token was made for later.
struct IssueTimePolicy: TokenPolicy {
    var leewayMilliseconds: Int64
    var check: VerificationCheck { .issueTime }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        guard let issued = token.token.issuedAt else { return .skip("\(token.kind.rawValue) tokens carry no issue time") }
        let early = issued.millisecondsSince1970 - now.millisecondsSince1970
        guard early > leewayMilliseconds else { return .pass }
        return .fail(
            .tokenNotYetValid,
            "issued \(DurationText.describe(milliseconds: early)) in the future (issueTime \(issued.iso8601); leeway \(DurationText.describe(milliseconds: leewayMilliseconds)))"
        )
    }
}
