import EntitlementTokens

/// The HMAC digests an EdgeAuth token is made with. An Akamai property is set
/// to one; the token does not say which, so a reader is told.
///
/// SHA-256 is the only one issued (and akamai-edgeauth's default); SHA-1 and
/// MD5 exist so that a token an older property makes can still be read back.
public enum EdgeAuthAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha256
    case sha1
    case md5

    /// How many hex digits the token's `hmac` field has with this digest.
    public var hmacHexLength: Int { digest.byteCount * 2 }

    var digest: ForeignDigest {
        switch self {
        case .sha256: .sha256
        case .sha1: .sha1
        case .md5: .md5
        }
    }
}
