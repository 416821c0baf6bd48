internal import EntitlementTokens

/// The Redis key of a token's replay entry: the prefix, then the SHA-256 of
/// its signed bytes in Base64url without padding (43 characters).
struct ReplayKey {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func bytes(prefix: [UInt8], identity: ReplayIdentity) -> [UInt8] {
        var key = prefix
        key.reserveCapacity(prefix.count + (identity.digest.count * 4 + 2) / 3)
        appendBase64URL(identity.digest, to: &key)
        return key
    }

    static func appendBase64URL(_ bytes: [UInt8], to output: inout [UInt8]) {
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(alphabet[Int(group >> 6 & 63)])
            output.append(alphabet[Int(group & 63)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(alphabet[Int(group >> 6 & 63)])
        default:
            break
        }
    }
}
