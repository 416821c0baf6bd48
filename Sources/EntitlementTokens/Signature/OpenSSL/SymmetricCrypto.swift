internal import COpenSSL

/// The content encryption of JWE (RFC 7518 §5): AES-GCM, and AES-CBC with an
/// HMAC-SHA-2 tag, plus the random bytes a minter needs. Only for encrypted
/// user metadata values (docs/DESIGN.md#user-metadata), read locally.
enum SymmetricCrypto {
    /// A symmetric operation failed; the reason names the step, never a secret.
    struct Failure: Error {
        var reason: String
    }

    // MARK: AES-GCM

    static func gcmDecrypt(key: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]) -> Result<[UInt8], Failure> {
        gcm(encrypting: false, key: key, iv: iv, input: ciphertext, tag: tag, aad: aad).map(\.output)
    }

    static func gcmEncrypt(key: [UInt8], iv: [UInt8], plaintext: [UInt8], aad: [UInt8]) -> Result<(ciphertext: [UInt8], tag: [UInt8]), Failure> {
        gcm(encrypting: true, key: key, iv: iv, input: plaintext, tag: [], aad: aad).map { ($0.output, $0.tag) }
    }

    private static func gcm(
        encrypting: Bool,
        key: [UInt8],
        iv: [UInt8],
        input: [UInt8],
        tag: [UInt8],
        aad: [UInt8]
    )
        -> Result<(output: [UInt8], tag: [UInt8]), Failure>
    {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_gcm()
        case 32: cipher = EVP_aes_256_gcm()
        default: return .failure(Failure(reason: "an AES-GCM key of \(key.count) bytes"))
        }
        guard iv.count == 12 else { return .failure(Failure(reason: "an AES-GCM IV of \(iv.count) bytes; JWE uses 12")) }
        guard encrypting || tag.count == 16 else { return .failure(Failure(reason: "an AES-GCM tag of \(tag.count) bytes; JWE uses 16")) }
        guard let context = EVP_CIPHER_CTX_new() else { return .failure(Failure(reason: OpenSSLErrorQueue.drain())) }
        defer { EVP_CIPHER_CTX_free(context) }
        var length: Int32 = 0
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written = 0
        let ok: Bool = {
            guard EVP_CipherInit_ex(context, cipher, nil, key, iv, encrypting ? 1 : 0) == 1 else { return false }
            if !aad.isEmpty {
                guard EVP_CipherUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else { return false }
            }
            if !input.isEmpty {
                guard EVP_CipherUpdate(context, &output, &length, input, Int32(input.count)) == 1 else { return false }
                written = Int(length)
            }
            if !encrypting {
                var expected = tag
                guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &expected) == 1 else { return false }
            }
            let final = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + written, &length) }
            guard final == 1 else { return false }
            written += Int(length)
            return true
        }()
        guard ok else {
            let reason = OpenSSLErrorQueue.drain(fallback: "")
            return .failure(
                Failure(reason: encrypting ? "AES-GCM failed: \(reason)" : "the AES-GCM tag does not check (wrong key, or the value was altered)")
            )
        }
        var producedTag: [UInt8] = []
        if encrypting {
            producedTag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &producedTag) == 1 else {
                return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
            }
        }
        return .success((Array(output[..<written]), producedTag))
    }

    // MARK: AES-CBC + HMAC (RFC 7518 §5.2)

    /// AES_CBC_HMAC_SHA2 decryption: `key` is MAC key ‖ encryption key (32 bytes
    /// for A128CBC-HS256, 64 for A256CBC-HS512); the tag is checked, in constant
    /// time, before anything is decrypted.
    static func cbcHMACDecrypt(key: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]) -> Result<[UInt8], Failure> {
        guard key.count == 32 || key.count == 64 else { return .failure(Failure(reason: "an AES-CBC-HMAC key of \(key.count) bytes")) }
        guard iv.count == 16 else { return .failure(Failure(reason: "an AES-CBC IV of \(iv.count) bytes; JWE uses 16")) }
        let half = key.count / 2
        let expected = cbcTag(macKey: Array(key[..<half]), iv: iv, ciphertext: ciphertext, aad: aad)
        guard let expected, tag.count == half,
            expected.withUnsafeBytes({ lhs in tag.withUnsafeBytes { rhs in CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, half) } }) == 0
        else {
            return .failure(Failure(reason: "the HMAC tag does not check (wrong key, or the value was altered)"))
        }
        return cbc(encrypting: false, key: Array(key[half...]), iv: iv, input: ciphertext)
    }

    static func cbcHMACEncrypt(key: [UInt8], iv: [UInt8], plaintext: [UInt8], aad: [UInt8]) -> Result<(ciphertext: [UInt8], tag: [UInt8]), Failure> {
        guard key.count == 32 || key.count == 64, iv.count == 16 else { return .failure(Failure(reason: "bad AES-CBC-HMAC key or IV size")) }
        let half = key.count / 2
        return cbc(encrypting: true, key: Array(key[half...]), iv: iv, input: plaintext).flatMap { ciphertext in
            guard let tag = cbcTag(macKey: Array(key[..<half]), iv: iv, ciphertext: ciphertext, aad: aad) else {
                return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
            }
            return .success((ciphertext, tag))
        }
    }

    /// HMAC(MAC key, AAD ‖ IV ‖ ciphertext ‖ AL), truncated to half the key: RFC 7518 §5.2.2.1.
    private static func cbcTag(macKey: [UInt8], iv: [UInt8], ciphertext: [UInt8], aad: [UInt8]) -> [UInt8]? {
        let bits = UInt64(aad.count) * 8
        let lengthBlock = (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        let input = aad + iv + ciphertext + lengthBlock
        let method = macKey.count == 16 ? EVP_sha256() : EVP_sha512()
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard HMAC(method, macKey, Int32(macKey.count), input, input.count, &output, &length) != nil else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(output[..<macKey.count])
    }

    private static func cbc(encrypting: Bool, key: [UInt8], iv: [UInt8], input: [UInt8]) -> Result<[UInt8], Failure> {
        let cipher = key.count == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc()
        guard let context = EVP_CIPHER_CTX_new() else { return .failure(Failure(reason: OpenSSLErrorQueue.drain())) }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 32)
        var length: Int32 = 0
        var written = 0
        guard EVP_CipherInit_ex(context, cipher, nil, key, iv, encrypting ? 1 : 0) == 1,
            EVP_CipherUpdate(context, &output, &length, input, Int32(input.count)) == 1
        else {
            return .failure(Failure(reason: "AES-CBC failed: \(OpenSSLErrorQueue.drain())"))
        }
        written = Int(length)
        let final = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + written, &length) }
        guard final == 1 else {
            OpenSSLErrorQueue.clear()
            return .failure(Failure(reason: "the AES-CBC padding does not check"))
        }
        written += Int(length)
        return .success(Array(output[..<written]))
    }
}
