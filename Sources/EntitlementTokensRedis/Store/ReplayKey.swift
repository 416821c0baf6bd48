internal import EntitlementTokens

/// The Redis key of a token's replay entry: the prefix, then the SHA-256 of
/// its signed bytes in Base64url without padding (43 characters).
struct ReplayKey {
    static func bytes(prefix: [UInt8], identity: ReplayIdentity) -> [UInt8] {
        var key = prefix
        key.reserveCapacity(prefix.count + (identity.digest.count * 4 + 2) / 3)
        Base64.append(identity.digest.span, alphabet: .url, padded: false, to: &key)
        return key
    }
}
