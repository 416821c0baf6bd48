/// `UNTRUSTED_MVPD` when the token's MVPD (`mvpdId` / `simpleTokenMsoID`) is not allowed.
///
/// Looked up byte for byte (docs/DESIGN.md#ids-are-compared-byte-for-byte) in a set keyed by UTF-8 bytes, still
/// one hash per token: a `Set<String>` would let `Café` decomposed in as `Café`.
struct MVPDPolicy: TokenPolicy {
    var allowed: Set<UTF8Key>
    var check: VerificationCheck { .mvpd }

    init(allowed: [String]) {
        self.allowed = Set(allowed.map(UTF8Key.init))
    }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        guard let mvpd = token.token.mvpdID else { return .fail(.untrustedMVPD, "the token names no MVPD") }
        guard allowed.contains(UTF8Key(mvpd)) else {
            // An allowed MVPD that prints like this one (another Unicode form) is shown with its scalars, and so is this one.
            let twin = allowed.first { $0.string == mvpd }?.string ?? mvpd
            let list = allowed.map { $0.string.quotedID(beside: mvpd) }.sorted().joined(separator: ", ")
            return .fail(.untrustedMVPD, "MVPD \(mvpd.quotedID(beside: twin)) is not in the allowed list (\(list))")
        }
        return .pass
    }
}
