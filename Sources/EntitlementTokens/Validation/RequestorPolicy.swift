/// `INVALID_REQUESTOR_ID` when the token was issued for another requestor (site or app).
/// Compared byte for byte (docs/DESIGN.md#ids-are-compared-byte-for-byte): no Unicode normalisation, case folding or trimming.
struct RequestorPolicy: TokenPolicy {
    var expected: String
    var check: VerificationCheck { .requestor }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        let actual = token.token.requestorID
        guard actual.hasSameUTF8(as: expected) else {
            return .fail(.invalidRequestorID, "requestor is \(actual.quotedID(beside: expected)), expected \(expected.quotedID(beside: actual))")
        }
        return .pass
    }
}
