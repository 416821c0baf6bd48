/// Refuses public keys whose mathematics make forgery trivial or verification
/// needlessly slow (docs/DESIGN.md#degenerate-keys). Applied to every key at load, whatever the
/// ``KeyLoadingOptions``: one such key in a trusted directory makes every
/// forged token valid, and no legitimate issuer has one.
///
/// The reproducers that motivated each rule:
/// - RSA with e = 1: `s^1 mod n = s`, so the PKCS#1 padding of any digest *is*
///   a valid "signature", made without any private key.
/// - RSA with an even e (e = 2 is Rabin, not RSA): not a permutation, no
///   sound RSA signature scheme uses it.
/// - RSA with a 3070-bit e: valid-looking, but every verify costs ~200× a
///   normal one — a denial of service planted in the configuration.
/// - Ed25519 with the identity point: `R = identity, S = 0` verifies for
///   any message. Every point of small order has the same flaw for a
///   fraction of messages (1/2, 1/4, 1/8).
enum DegenerateKeys {
    /// Longest RSA modulus accepted, in bits (BoringSSL's and OpenSSL's
    /// `OPENSSL_RSA_MAX_MODULUS_BITS`; OpenSSL refuses to verify above it anyway).
    static let maximumRSAModulusBits = 16384
    /// Longest RSA public exponent accepted, in bits. Issuers use 65537 (17
    /// bits); 3 is the smallest sound value.
    static let maximumRSAExponentBits = 32

    /// Why the RSA or RSA-PSS `key` is degenerate, or nil when it is sound.
    static func rsaDefect(of key: OpenSSLKey) -> String? {
        guard let modulus = key.integerFacts("n"), let exponent = key.integerFacts("e") else {
            return "no readable modulus and exponent"
        }
        if modulus.bitCount > maximumRSAModulusBits {
            return "modulus of \(modulus.bitCount) bits is over \(maximumRSAModulusBits) bits"
        }
        if !modulus.isOdd {
            // A product of two odd primes is odd; an even modulus is factored already.
            return "modulus is even, so it is not a product of two large primes"
        }
        if exponent.bitCount > maximumRSAExponentBits {
            return "public exponent is \(exponent.bitCount) bits long, over \(maximumRSAExponentBits) bits "
                + "(each verify would cost many times a normal one)"
        }
        // bitCount ≤ 32 here, so the value is known.
        let value = exponent.value ?? 0
        if value < 3 {
            return "public exponent e = \(value) is below 3"
                + (value == 1 ? " (with e = 1 any padded digest verifies as a signature)" : "")
        }
        if !exponent.isOdd {
            return "public exponent e = \(value) is even"
        }
        return nil
    }

    /// Why the EC `key` is degenerate, or nil when OpenSSL's public-key
    /// check passes (on the curve, not at infinity, of the group's order).
    static func ecDefect(of key: OpenSSLKey) -> String? {
        key.passesPublicKeyCheck()
            ? nil
            : "public point fails OpenSSL's public-key check (off the curve, at infinity, or not of the group's order)"
    }

    /// Why the Ed25519 `key` is degenerate, or nil when sound.
    static func ed25519Defect(of key: OpenSSLKey) -> String? {
        guard let encoded = key.rawPublicKey() else { return "no readable public point" }
        return ed25519Defect(encoded: encoded)
    }

    /// Why the 32-byte Ed25519 encoding `encoded` is degenerate, or nil.
    ///
    /// RFC 8032 §5.1.3: the encoding is y (255 bits, little-endian) with the
    /// sign of x in the top bit. It is canonical only when y < p = 2^255 − 19,
    /// and when x = 0 (y = 1 or y = p − 1) the sign bit is 0. OpenSSL imports
    /// any 32 bytes as a key and reduces y modulo p when verifying, so both
    /// checks are done here.
    static func ed25519Defect(encoded: [UInt8]) -> String? {
        guard encoded.count == 32 else { return "public key is \(encoded.count) bytes, not 32" }
        var y = encoded
        y[31] &= 0x7f
        let signBitSet = encoded[31] & 0x80 != 0
        if littleEndian(y, isAtLeast: ed25519FieldPrime) {
            return "public key is a non-canonical encoding (y ≥ 2^255 − 19)"
        }
        if signBitSet && (y == ed25519Identity || y == ed25519PrimeMinusOne) {
            return "public key is a non-canonical encoding (x = 0 with the sign bit set)"
        }
        if let order = ed25519SmallOrderPoints.first(where: { $0.encoding == encoded })?.order {
            return order == 1
                ? "public key is the identity point (R = identity, S = 0 would verify any message)"
                : "public key is a point of small order \(order) (forgeries verify for 1 message in \(order))"
        }
        return nil
    }

    // MARK: Ed25519 constants (little-endian, as encoded)

    /// p = 2^255 − 19.
    static let ed25519FieldPrime: [UInt8] = [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    static let ed25519PrimeMinusOne: [UInt8] = [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    static let ed25519Identity: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 31)

    /// The eight points of the curve's 8-torsion subgroup, in their canonical
    /// encodings (the same table as libsodium's and Zcash's ZIP 215 blocklists
    /// without their non-canonical entries, which the rules above catch).
    static let ed25519SmallOrderPoints: [(encoding: [UInt8], order: Int)] = [
        (ed25519Identity, 1),
        (ed25519PrimeMinusOne, 2),
        ([UInt8](repeating: 0, count: 32), 4),
        ([UInt8](repeating: 0, count: 31) + [0x80], 4),
        (hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), 8),
        (hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"), 8),
        (hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), 8),
        (hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"), 8),
    ]

    /// True when little-endian `value` ≥ `bound` (both 32 bytes).
    private static func littleEndian(_ value: [UInt8], isAtLeast bound: [UInt8]) -> Bool {
        for index in stride(from: value.count - 1, through: 0, by: -1) where value[index] != bound[index] {
            return value[index] > bound[index]
        }
        return true
    }

    private static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8? = nil
        for character in text.utf8 {
            let nibble = character <= 0x39 ? character - 0x30 : character - 0x61 + 10
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
