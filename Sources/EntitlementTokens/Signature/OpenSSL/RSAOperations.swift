internal import COpenSSL

/// The RSA operations of the SDK's credentials (docs/DESIGN.md#the-sdks-other-credentials), over OpenSSL: PKCS#1 v1.5
/// signatures with a chosen digest (signed requestor IDs, SHA-256 or SHA-1),
/// and encryption with PKCS#1 v1.5 or OAEP (user metadata values).
///
/// Not the token path: a requestor ID or a metadata value is checked once per
/// paste, so each call sets up its own context.
enum RSAOperations {
    /// The digest of a PKCS#1 v1.5 signature.
    enum Digest: Sendable {
        case sha256, sha1

        var method: OpaquePointer? {
            switch self {
            case .sha256: EVP_sha256()
            case .sha1: EVP_sha1()
            }
        }
    }

    /// The padding of an RSA encryption.
    enum Padding: Sendable, CaseIterable {
        case pkcs1v15, oaepSHA1, oaepSHA256
    }

    /// True only when `signature` is an RSA PKCS#1 v1.5 signature with `digest`
    /// over `message` by `key`. Never traps on hostile input.
    static func isValidPKCS1Signature(_ signature: [UInt8], message: [UInt8], key: OpenSSLKey, digest: Digest) -> Bool {
        guard key.isA("RSA"), signature.count == key.maximumSignatureSize,
            let context = DigestOperationContext()
        else { return false }
        var keyContext: OpaquePointer? = nil
        guard EVP_DigestVerifyInit(context.pointer, &keyContext, digest.method, nil, key.pointer) == 1,
            let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return context.verify(signature, over: message)
    }

    /// An RSA PKCS#1 v1.5 signature with `digest` over `message`, or nil with OpenSSL's reason.
    static func pkcs1Signature(for message: [UInt8], key: OpenSSLKey, digest: Digest) -> Result<[UInt8], Failure> {
        guard key.isA("RSA") else { return .failure(Failure(reason: "a \(key.typeName) key; an RSA key is needed")) }
        guard let context = DigestOperationContext() else { return .failure(Failure(reason: OpenSSLErrorQueue.drain())) }
        var keyContext: OpaquePointer? = nil
        guard EVP_DigestSignInit(context.pointer, &keyContext, digest.method, nil, key.pointer) == 1,
            let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        var length = 0
        guard EVP_DigestSign(context.pointer, nil, &length, message, message.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context.pointer, &signature, &length, message, message.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        return .success(Array(signature[..<length]))
    }

    /// `plaintext` encrypted to `key` (a public or private RSA key) with `padding`.
    static func encrypt(_ plaintext: [UInt8], key: OpenSSLKey, padding: Padding) -> Result<[UInt8], Failure> {
        guard key.isA("RSA") else { return .failure(Failure(reason: "a \(key.typeName) key; an RSA key is needed")) }
        guard let raw = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        let context = PublicKeyOperationContext(taking: raw)
        guard EVP_PKEY_encrypt_init(context.pointer) == 1, configure(context.pointer, padding) else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        var length = 0
        guard EVP_PKEY_encrypt(context.pointer, nil, &length, plaintext, plaintext.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        var ciphertext = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_encrypt(context.pointer, &ciphertext, &length, plaintext, plaintext.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        return .success(Array(ciphertext[..<length]))
    }

    /// `ciphertext` decrypted with the private RSA `key` under `padding`, or why not.
    ///
    /// PKCS#1 v1.5 runs with implicit rejection off (`implicit-rejection` = 0,
    /// OpenSSL 3.2 and later; earlier versions never reject implicitly), so a
    /// tampered value is an error instead of random bytes that look decrypted.
    /// Only a local operation (the CLI, the library): the gate never decrypts on
    /// a network request, so no padding oracle is offered to anyone.
    static func decrypt(_ ciphertext: [UInt8], key: OpenSSLKey, padding: Padding) -> Result<[UInt8], Failure> {
        guard key.isA("RSA") else { return .failure(Failure(reason: "a \(key.typeName) key; an RSA key is needed")) }
        guard ciphertext.count == key.maximumSignatureSize else {
            return .failure(Failure(reason: "\(ciphertext.count) bytes of ciphertext; an RSA-\(key.bits) ciphertext is \(key.maximumSignatureSize)"))
        }
        guard let raw = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        let context = PublicKeyOperationContext(taking: raw)
        guard EVP_PKEY_decrypt_init(context.pointer) == 1, configure(context.pointer, padding) else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        if padding == .pkcs1v15 {
            // A parameter an older provider does not know is ignored, which is
            // what is wanted: those versions have no implicit rejection.
            // OSSL_PARAM keeps pointers to the name and the value: both must live
            // until the call returns, hence the nested scopes.
            var off: UInt32 = 0
            "implicit-rejection".withCString { name in
                withUnsafeMutablePointer(to: &off) { value in
                    let params = [OSSL_PARAM_construct_uint(name, value), OSSL_PARAM_construct_end()]
                    _ = EVP_PKEY_CTX_set_params(context.pointer, params)
                }
            }
            OpenSSLErrorQueue.clear()
        }
        var length = 0
        guard EVP_PKEY_decrypt(context.pointer, nil, &length, ciphertext, ciphertext.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain()))
        }
        var plaintext = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_decrypt(context.pointer, &plaintext, &length, ciphertext, ciphertext.count) == 1 else {
            return .failure(Failure(reason: OpenSSLErrorQueue.drain(fallback: "the padding does not check")))
        }
        return .success(Array(plaintext[..<length]))
    }

    private static func configure(_ context: OpaquePointer, _ padding: Padding) -> Bool {
        switch padding {
        case .pkcs1v15:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .oaepSHA1, .oaepSHA256:
            // RFC 8017 OAEP with MGF1 over the same digest (JWE RSA-OAEP and RSA-OAEP-256).
            let method = padding == .oaepSHA1 ? EVP_sha1() : EVP_sha256()
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_oaep_md(context, method) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, method) == 1
        }
    }

    /// Why OpenSSL refused, in its words.
    struct Failure: Error {
        var reason: String
    }
}
