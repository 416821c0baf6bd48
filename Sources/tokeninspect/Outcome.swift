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

extension DecodedToken {
    /// The decoded signature bytes' count, or nil when the text is not Base64.
    var signatureByteCount: Int? {
        var count = 0
        var valid = true
        var padding = 0
        for byte in xml[frame.signatureText] {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                count += 1
            case UInt8(ascii: "="): padding += 1
            case 0x20, 0x0A, 0x0D, 0x09: break
            default: valid = false
            }
        }
        return valid ? count * 6 / 8 : nil
    }
}
