import EntitlementTokens

/// What a pasted public key (``PastedKey``) says about one token, beside
/// the gate's verdict — which it never changes: a token no key of the gate
/// verifies stays `INVALID_SIGNATURE` in the report, whatever the paste.
///
/// The pasted key is tried only when the gate's own keys refused the
/// signature of a token that decoded. It is answered as a JSON object
/// (`pastedKey` in the debugger's answer, one per report):
///
/// - `{"tried": false, "reason": …}`: the gate's verdict did not depend on a key
///   it lacks (the token is valid or failed before the signature, or it did not decode);
/// - `{"tried": true, "signedByPastedKey": false, "reason": …}`: no pasted key verifies it;
/// - `{"tried": true, "signedByPastedKey": true, "status": …, "reason": …, "key": …}`:
///   `status` is `SIGNED_BY_PASTED_KEY` when every other check passed under
///   it, else the first failing check's status (`TOKEN_EXPIRED`, …). Never
///   `VALID_TOKEN`: this gate does not trust the key.
enum PastedKeyCheck {
    static let signedByPastedKey = "SIGNED_BY_PASTED_KEY"
    static let notTrusted = "signed by the pasted key — not trusted by this gate"

    /// The check for one token, with a verifier of the pasted ring alone (no
    /// replay store, the page's expectations and "now").
    static func json(gateVerdict: Verdict, pasted verifier: TokenVerifier, expecting expectations: RequestExpectations) async -> String {
        guard gateVerdict.status == .invalidSignature, let token = gateVerdict.token else {
            let why =
                gateVerdict.token == nil
                ? "the token did not decode, so there is no signature to check"
                : gateVerdict.key != nil
                    ? "a key this gate trusts verifies the signature"
                    : "the gate's verdict does not depend on the signature's key"
            return notTried(why)
        }
        let verdict = await verifier.verify(token, expecting: expectations)
        guard let key = verdict.key else {
            // No pasted key verifies the signature (a format error cannot come after decoding).
            return notSigned(verdict.reason)
        }
        return signed(verdict.status, reason: reason(verdict.status, verdict.reason), key: key.description)
    }

    // The three answers, for tokens and for the SDK's other credentials alike (docs/DESIGN.md#the-sdks-other-credentials).

    static func notTried(_ why: String) -> String {
        answer(signed: nil, reason: why)
    }

    static func notSigned(_ verifierReason: String) -> String {
        answer(signed: false, reason: "no pasted key verifies the signature: \(verifierReason)")
    }

    /// `status`: the pasted key's verdict; `VALID_TOKEN` is shown as `SIGNED_BY_PASTED_KEY`.
    static func signed(_ status: VerificationStatus, reason: String, key: String) -> String {
        answer(signed: true, status: status == .validToken ? signedByPastedKey : status.rawValue, reason: reason, key: key)
    }

    /// The one object of the three answers: `signed` nil when the key was not tried.
    private static func answer(signed: Bool?, status: String? = nil, reason: String, key: String? = nil) -> String {
        var json = JSONWriter(capacity: 256, controlEscapes: .unicode)
        json.beginObject()
        json.member("tried")
        json.bool(signed != nil)
        if let signed {
            json.member("signedByPastedKey")
            json.bool(signed)
        }
        if let status {
            json.member("status")
            json.string(status)
        }
        json.member("reason")
        json.string(reason)
        if let key {
            json.member("key")
            json.string(key)
        }
        json.endObject()
        return json.text
    }

    /// The reason beside a check run under the pasted key: what passed, or what failed.
    static func reason(_ status: VerificationStatus, _ verifierReason: String) -> String {
        status == .validToken ? "\(notTrusted); every other check passed" : "\(notTrusted); \(verifierReason)"
    }
}
