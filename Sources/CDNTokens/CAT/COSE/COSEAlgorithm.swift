/// The COSE algorithms a Common Access Token is checked with (RFC 9053):
/// the key decides which one applies, and the token's protected `alg` must
/// name it, so a token never chooses how it is checked (no algorithm confusion).
public enum COSEAlgorithm: Int64, Sendable, Hashable, CaseIterable {
    /// HMAC 256/256: HMAC-SHA-256, full 32-byte tag (RFC 9053 §3.1). COSE_Mac0.
    case hmacSHA256 = 5
    /// ECDSA P-256 with SHA-256, signature raw `r‖s` (RFC 9053 §2.1). COSE_Sign1.
    case es256 = -7

    /// The name RFC 9053 gives it.
    public var name: String {
        switch self {
        case .hmacSHA256: "HMAC 256/256"
        case .es256: "ES256"
        }
    }

    /// The COSE structure this algorithm is carried in.
    public var structure: COSEMessage.Structure {
        switch self {
        case .hmacSHA256: .mac0
        case .es256: .sign1
        }
    }

    /// The length of the MAC tag or signature it makes.
    var tagByteCount: Int {
        switch self {
        case .hmacSHA256: 32
        case .es256: 64
        }
    }

    /// `alg` as a message names it, for refusals: `5 (HMAC 256/256)`, `4 (HMAC 256/64)`.
    static func describe(_ value: CBORValue) -> String {
        guard let label = value.int64 else { return value.diagnostic() }
        let known: [Int64: String] = [
            5: "HMAC 256/256", -7: "ES256", 4: "HMAC 256/64", 6: "HMAC 384/384", 7: "HMAC 512/512",
            -35: "ES384", -36: "ES512", -8: "EdDSA", -37: "PS256", -257: "RS256", 0: "reserved",
        ]
        return known[label].map { "\(label) (\($0))" } ?? String(label)
    }
}
