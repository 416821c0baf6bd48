internal import COpenSSL

/// `DEVICE_MISMATCH` when the token is bound to another device, or to none
/// while the server expects one. Compared in constant time: the fingerprint
/// is a credential, and how much of it matched must not leak through timing.
struct DevicePolicy: TokenPolicy {
    var expected: VerificationPolicy.DeviceExpectation
    var check: VerificationCheck { .device }

    func evaluate(_ token: DecodedToken, now: TokenTimestamp) -> PolicyResult {
        if token.kind == .media { return .skip("media tokens carry no device fingerprint") }
        guard let actual = token.token.fingerprint else {
            return .fail(.deviceMismatch, "the token is not bound to a device (no simpleTokenFingerprint)")
        }
        let expectedFingerprint: String
        switch expected {
        case .fingerprint(let fingerprint):
            expectedFingerprint = fingerprint.lowercased()
        case .deviceID(let deviceID):
            guard let hashed = DeviceFingerprint.hash(deviceID, hexLength: actual.utf8.count) else {
                return .fail(.deviceMismatch, "the token's fingerprint has \(actual.utf8.count) digits; no known hash has that size")
            }
            expectedFingerprint = hashed
        }
        guard DeviceFingerprint.constantTimeEquals(actual, expectedFingerprint) else {
            return .fail(.deviceMismatch, "the token is bound to device \(actual.prefix(8))…, not to the expected one")
        }
        return .pass
    }
}

/// How a device id becomes the fingerprint tokens carry.
public enum DeviceFingerprint {
    /// Lowercase hex digest of `deviceID`: SHA-256 for 64 digits, SHA-1 for 40, MD5 for 32.
    public static func hash(_ deviceID: String, hexLength: Int) -> String? {
        let md: OpaquePointer?
        switch hexLength {
        case 64: md = EVP_sha256()
        case 40: md = EVP_sha1()
        case 32: md = EVP_md5()
        default: return nil
        }
        guard let md else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(deviceID.utf8)
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, md, nil)
        }
        guard ok == 1 else { return nil }
        return ByteRules.lowercaseHex(digest[0..<Int(length)])
    }

    /// Equal-length strings compared without an early exit; the length itself is not secret.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<left.count { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
