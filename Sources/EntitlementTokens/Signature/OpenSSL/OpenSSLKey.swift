internal import COpenSSL

/// The one owner of an `EVP_PKEY` (docs/DESIGN.md#the-librarys-habits).
///
/// `EVP_PKEY` is reference counted inside OpenSSL, but Swift code must not
/// juggle `EVP_PKEY_up_ref`/`EVP_PKEY_free` by hand: this class takes the
/// reference it is given and drops it in `deinit`, and every Swift value that
/// needs the key holds this object instead of the pointer.
///
/// `@unchecked Sendable` because OpenSSL 3 documents `EVP_PKEY` as safe to use
/// from many threads at once for read-only work (making operation contexts,
/// encoding), and nothing in this module mutates a key after it is loaded.
final class OpenSSLKey: @unchecked Sendable {
    /// The `EVP_PKEY *`, never null.
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// True when OpenSSL names the key type `name` ("RSA", "RSA-PSS", "EC", "ED25519").
    func isA(_ name: String) -> Bool {
        EVP_PKEY_is_a(pointer, name) == 1
    }

    /// The key size in bits as OpenSSL counts it (RSA: modulus bits).
    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// The largest signature the key produces, in bytes (RSA: the modulus
    /// length, which is also the only valid signature length).
    var maximumSignatureSize: Int { Int(EVP_PKEY_get_size(pointer)) }

    /// OpenSSL's name for the key type, for error messages ("ED448", "DSA", …).
    var typeName: String {
        guard let name = EVP_PKEY_get0_type_name(pointer) else { return "unknown" }
        return String(cString: name)
    }

    /// The EC group's short name ("prime256v1", "secp384r1"), or nil when the
    /// key has no named group (explicit parameters) or is not an EC key.
    var groupName: String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        let ok = buffer.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_group_name(pointer, $0.baseAddress, $0.count, &length)
        }
        guard ok == 1, length > 0, length < buffer.count else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What ``DegenerateKeys`` needs to know about one integer of a key
    /// (an RSA modulus or exponent), without copying the number out.
    struct IntegerFacts: Equatable {
        var bitCount: Int
        var isOdd: Bool
        /// The value when it fits in 64 bits.
        var value: UInt64?
    }

    /// Facts about the integer parameter `name` ("n", "e": `OSSL_PKEY_PARAM_RSA_*`),
    /// or nil when the key has no such parameter.
    func integerFacts(_ name: String) -> IntegerFacts? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { BN_free(number) }
        let bitCount = Int(BN_num_bits(number))
        return IntegerFacts(
            bitCount: bitCount,
            isOdd: BN_is_odd(number) == 1,
            value: bitCount <= 64 ? UInt64(BN_get_word(number)) : nil
        )
    }

    /// OpenSSL's full public-key check (`EVP_PKEY_public_check`): for EC,
    /// the point is not at infinity, lies on the curve and has the group's
    /// order. False when the check fails or cannot run.
    func passesPublicKeyCheck() -> Bool {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_PKEY_CTX_free(context) }
        let passed = EVP_PKEY_public_check(context) == 1
        if !passed { OpenSSLErrorQueue.clear() }
        return passed
    }

    /// The raw public key of an Ed25519 (or X25519, Ed448) key: the 32-byte
    /// encoded point for Ed25519. Nil for other key types.
    func rawPublicKey() -> [UInt8]? {
        var length = 0
        guard EVP_PKEY_get_raw_public_key(pointer, nil, &length) == 1, length > 0, length <= 64 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_raw_public_key(pointer, &bytes, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(bytes[..<length])
    }

    /// The DER `SubjectPublicKeyInfo` of the key's public half.
    ///
    /// Used for the fingerprint, for equality, and to derive a verify-only
    /// copy of a private key, so one public key always has one encoding.
    func subjectPublicKeyInfoDER() -> [UInt8]? {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return der
    }
}
