/// `INVALID_REQUESTOR_ID` when the token was issued for another requestor (site or app).
struct RequestorPolicy: TokenPolicy {
    var expected: String
    var check: VerificationCheck { .requestor }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        let actual = token.token.requestorID
        return actual == expected ? .pass : .fail(.invalidRequestorID, "requestor is '\(actual)', expected '\(expected)'")
    }
}
