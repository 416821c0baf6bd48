internal import COpenSSL

/// Verifies a JWS signature (RFC 7518 §3) with OpenSSL, for the algorithm the
/// statement's header names, after ``SoftwareStatementVerifier`` has checked
/// that the algorithm is allowed and fits the key.
///
/// Why not ``SignatureVerifier``: the XML tokens have one digest (SHA-256),
/// chosen by the key, and that verifier pre-builds contexts for it. A JWS
/// names SHA-384 and SHA-512 too, ECDSA over P-384, and PSS with a salt as long
/// as the digest. Statements are verified once per paste, not per playback
/// request, so a fresh `EVP_MD_CTX` per verify costs nothing that matters.
enum JOSESignatureOperation {
    /// True only when `signature` (the JWS form: raw `r‖s` for ECDSA) is a
    /// valid signature over `message` by `key` under `algorithm`.
    static func isValid(_ signature: [UInt8], message: [UInt8], key: OpenSSLKey, algorithm: JWSAlgorithm) -> Bool {
        var signature = signature
        switch algorithm.keyFamily {
        case .ecP256, .ecP384:
            // Raw r‖s only, of exactly the curve's width (RFC 7518 §3.4): a
            // DER signature is refused, not tried.
            let width = algorithm.keyFamily == .ecP256 ? 32 : 48
            guard signature.count == 2 * width, let der = ECDSASignatureEncoding.der(fromRaw: signature) else { return false }
            signature = der
        case .rsa:
            guard signature.count == key.maximumSignatureSize else { return false }
        case .ed25519:
            guard signature.count == 64 else { return false }
        }
        guard let context = DigestOperationContext() else { return false }
        var method: OpaquePointer? = nil
        if let name = algorithm.digestName {
            method = EVP_get_digestbyname(name)
            guard method != nil else {
                OpenSSLErrorQueue.clear()
                return false
            }
        }
        var keyContext: OpaquePointer? = nil
        guard EVP_DigestVerifyInit(context.pointer, &keyContext, method, nil, key.pointer) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        if algorithm.keyFamily == .rsa, let keyContext {
            let configured: Bool
            if algorithm.isPSS {
                // RFC 7518 §3.5: MGF1 with the same digest, salt as long as the digest.
                configured =
                    EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1
                    && EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, method) == 1
                    && EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(algorithm.digestByteCount)) == 1
            } else {
                configured = EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
            }
            guard configured else {
                OpenSSLErrorQueue.clear()
                return false
            }
        }
        return context.verify(signature, over: message)
    }
}
