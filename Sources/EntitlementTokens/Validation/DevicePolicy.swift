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
        let algorithm: OpenSSLDigest.Algorithm
        switch hexLength {
        case 64: algorithm = .sha256
        case 40: algorithm = .sha1
        case 32: algorithm = .md5
        default: return nil
        }
        return OpenSSLDigest.digest(of: Array(deviceID.utf8).span, with: algorithm).map { ByteRules.lowercaseHex($0) }
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
