/// What is known about one token of an input: where it came from, how it
/// decoded, and — when it was verified — its verdict.
///
/// This is the report object (docs/DESIGN.md#output-forms), one value that every front end renders:
/// the CLI's text and JSON, the service's `POST /v1/verify` answer, the
/// debugger. A report is a description, not a proof: only a ``Verdict``'s
/// ``Verdict/verified`` is that.
public struct TokenReport: Sendable, Equatable {
    /// 1-based index of the token in the input stream.
    public let input: Int
    /// How the input is named (`argument 1`, a path, `stdin`, `body`).
    public let source: String
    /// The line of the input where the record starts.
    public let line: Int
    /// The decoded token, when it decoded.
    public let token: DecodedToken?
    /// Why it did not decode.
    public let error: TokenError?
    /// The verdict, when it was verified (`inspect` without keys verifies nothing).
    public let verdict: Verdict?
    /// The REST envelope of a record that carries no token (a v2 denial).
    var recordEnvelope: RESTEnvelope?

    /// The unsigned REST envelope the token came in, or that a denial stood
    /// in: shown, never trusted.
    public var envelope: RESTEnvelope? { token?.envelope ?? recordEnvelope }

    /// A verified token's report.
    public init(input: Int, source: String, line: Int, verdict: Verdict) {
        self.input = input
        self.source = source
        self.line = line
        self.token = verdict.token
        self.error = verdict.formatError
        self.verdict = verdict
    }

    /// A decoded (or undecodable) token's report, with no judgement.
    public init(input: Int, source: String, line: Int, decoded: Result<DecodedToken, TokenError>) {
        self.input = input
        self.source = source
        self.line = line
        switch decoded {
        case .success(let token):
            self.token = token
            self.error = nil
        case .failure(let error):
            self.token = nil
            self.error = error
        }
        self.verdict = nil
    }

    init(input: Int, source: String, line: Int, token: DecodedToken?, error: TokenError?, verdict: Verdict?) {
        self.input = input
        self.source = source
        self.line = line
        self.token = token
        self.error = error
        self.verdict = verdict
    }

    /// The status (docs/DESIGN.md#statuses), or nil for a decoded token nobody verified.
    public var status: VerificationStatus? {
        if let verdict { return verdict.status }
        return error == nil ? nil : .invalidTokenFormat
    }

    /// For people; may quote input (escape it before a terminal or a log).
    public var reason: String {
        if let verdict { return verdict.reason }
        if let error { return error.description }
        return "decoded; signature not checked (no key given)"
    }

    /// "looks like RSA-2048" from the signature's size alone, for people.
    static func signatureShape(byteCount: Int) -> String {
        switch byteCount {
        case 0: "empty"
        case 64: "Ed25519 or raw ECDSA P-256"
        case 70...72: "DER ECDSA P-256"
        case 128, 256, 384, 512: "RSA-\(byteCount * 8)"
        default: "no known algorithm"
        }
    }
}
