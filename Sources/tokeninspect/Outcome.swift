import EntitlementTokens

/// What the CLI knows about one token: where it came from, its decoding,
/// and (when verified) its verdict.
struct Outcome: Sendable {
    var input: Int
    var source: String
    var line: Int
    var token: DecodedToken?
    var error: TokenError?
    var verdict: Verdict?

    /// The §5 status, or nil for a decoded token nobody verified (`inspect` without keys).
    var status: VerificationStatus? {
        if let verdict { return verdict.status }
        return error == nil ? nil : .invalidTokenFormat
    }

    var reason: String {
        if let verdict { return verdict.reason }
        if let error { return error.description }
        return "decoded; signature not checked (no --key)"
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
