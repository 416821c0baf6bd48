import EntitlementTokens

/// The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials) in the debugger (issue 24): a record the
/// library's ``CredentialDetection`` finds to be a software statement, signed
/// requestor ID or user metadata (or one asked for with `kind=`, the page's
/// explicit choice) is reported by the library's ``CredentialReport`` instead
/// of the token pipeline — the same value the CLI renders.
///
/// A software statement is verified with the gate's keys, the page's leeway
/// and "now"; when they refuse its signature and a public key was pasted, the
/// pasted key is tried the way ``PastedKeyCheck`` tries it for tokens (never
/// `VALID_TOKEN`). User metadata is shown with its encrypted members marked
/// and never decrypted: the debugger takes no private key (docs/DESIGN.md#user-metadata).
/// A signed requestor ID is verified against the page's requestor with the
/// gate's keys (RSA PKCS#1 v1.5, SHA-256; the reason says when SHA-1 would
/// verify), and with a pasted key the same way as a statement; without a
/// requestor it is shown, not verified (docs/DESIGN.md#telling-the-kinds-apart).
struct DebuggerCredentials: Sendable {
    /// What the page asked the records to be read as; nil: detected.
    let kind: CredentialKind?
    let verifier: SoftwareStatementVerifier
    let pastedVerifier: SoftwareStatementVerifier?
    /// The page's requestor: what a signed requestor ID must sign.
    let requestor: String?
    let requestorIDVerifier: SignedRequestorIDVerifier
    let pastedRequestorIDVerifier: SignedRequestorIDVerifier?

    /// The `kind` parameter: a credential kind name, or nothing (the rule of `/v1/inspect`).
    static func kind(named name: String?) throws(ReportEndpoints.Failure) -> CredentialKind? {
        try ReportEndpoints.credentialKind(name)
    }

    /// The report of a record that is a credential, with its pasted-key check
    /// (nil without a pasted key); nil for a record the token pipeline reads.
    /// `candidate`: the record's bytes as ``ReportEndpoints/credentialCandidate(_:in:recordCount:)`` finds them.
    func report(_ record: TokenRecord, candidate: [UInt8], input: Int) -> (json: [UInt8], pastedKey: String?)? {
        guard let detected = ReportEndpoints.credential(CredentialDetection.detect(candidate, asking: kind), asked: kind) else { return nil }
        let report = CredentialReport.make(
            detected,
            input: input,
            source: "pasted",
            line: record.line,
            verifier: verifier,
            requestorIDVerifier: requestorIDVerifier,
            requestor: requestor
        )
        let check: String?
        if case .signedRequestorID(let id) = report.content {
            check = pastedRequestorIDVerifier.map { pastedCheck(id, gate: report.requestorIDVerdict, $0) }
        } else {
            check = pastedVerifier.map { pastedCheck(report, $0) }
        }
        return (report.json(), check)
    }

    private func pastedCheck(_ id: SignedRequestorID, gate: SignedRequestorIDVerdict?, _ pasted: SignedRequestorIDVerifier) -> String {
        guard let gate else {
            return PastedKeyCheck.notTried("no requestor given: a signed requestor ID signs only the requestor ID, so it is shown, not verified")
        }
        guard gate.status == .invalidSignature else { return PastedKeyCheck.notTried("a key this gate trusts verifies the signature") }
        let verdict = pasted.verify(id)
        guard let key = verdict.verified?.key else { return PastedKeyCheck.notSigned(verdict.reason) }
        return PastedKeyCheck.signed(verdict.status, reason: "\(PastedKeyCheck.notTrusted); \(verdict.reason)", key: key.description)
    }

    private func pastedCheck(_ report: CredentialReport, _ pasted: SoftwareStatementVerifier) -> String {
        guard let statement = report.statement, let gate = report.statementVerdict else {
            return PastedKeyCheck.notTried("only a software statement or a signed requestor ID carries a signature the pasted key can check here")
        }
        guard gate.status == .invalidSignature else {
            return PastedKeyCheck.notTried(
                gate.key != nil
                    ? "a key this gate trusts verifies the signature"
                    : "the gate's verdict does not depend on the signature's key"
            )
        }
        let verdict = pasted.verify(statement)
        guard let key = verdict.key else { return PastedKeyCheck.notSigned(verdict.reason) }
        return PastedKeyCheck.signed(verdict.status, reason: PastedKeyCheck.reason(verdict.status, verdict.reason), key: key.description)
    }
}
