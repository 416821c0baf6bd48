/// `UNTRUSTED_MVPD` when the token's MVPD (`mvpdId` / `simpleTokenMsoID`) is not allowed.
struct MVPDPolicy: TokenPolicy {
    var allowed: Set<String>
    var check: VerificationCheck { .mvpd }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        guard let mvpd = token.token.mvpdID else { return .fail(.untrustedMVPD, "the token names no MVPD") }
        return allowed.contains(mvpd) ? .pass : .fail(.untrustedMVPD, "MVPD '\(mvpd)' is not in the allowed list (\(allowed.sorted().joined(separator: ", ")))")
    }
}
