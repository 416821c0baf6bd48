internal import COpenSSL

/// The one owner of an `EVP_PKEY_CTX` configured for one operation.
///
/// `@unchecked Sendable` because a ``OpenSSLContextPool`` hands each context to one
/// thread at a time; the type only crosses threads while parked in the pool.
final class PublicKeyOperationContext: @unchecked Sendable {
    /// The `EVP_PKEY_CTX *`, never null.
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_CTX_free(pointer)
    }
}

/// The one owner of an `EVP_MD_CTX`, used for Ed25519's one-shot
/// `EVP_DigestVerify`/`EVP_DigestSign` (OpenSSL 3.0 has no Ed25519 path
/// through `EVP_PKEY_verify`).
///
/// `@unchecked Sendable` for the same reason as ``PublicKeyOperationContext``.
final class DigestOperationContext: @unchecked Sendable {
    /// The `EVP_MD_CTX *`, never null.
    let pointer: OpaquePointer

    init?() {
        guard let pointer = EVP_MD_CTX_new() else { return nil }
        self.pointer = pointer
    }

    deinit {
        EVP_MD_CTX_free(pointer)
    }

    /// `EVP_DigestVerify` of `signature` over `message`, once this context was
    /// set up with `EVP_DigestVerifyInit`; OpenSSL's error queue left empty.
    func verify(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        let status = signature.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                EVP_DigestVerify(pointer, signature.baseAddress, signature.count, message.baseAddress, message.count)
            }
        }
        if status != 1 { OpenSSLErrorQueue.clear() }
        return status == 1
    }
}

/// How an `EVP_PKEY_CTX` is configured for each ``SignatureAlgorithm`` that
/// signs a SHA-256 digest: one place, so signing and verifying can never
/// disagree about padding, digest or salt.
enum DigestSignatureSetup {
    enum Operation { case verify, sign }

    /// A new context for `key`, initialised for `operation` under `algorithm`,
    /// or nil with the reason OpenSSL gave.
    static func makeContext(
        for key: OpenSSLKey,
        algorithm: SignatureAlgorithm,
        operation: Operation
    ) -> Result<PublicKeyOperationContext, SetupFailure> {
        precondition(algorithm != .ed25519, "Ed25519 signs the message, not a digest")
        guard let raw = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain()))
        }
        let context = PublicKeyOperationContext(taking: raw)
        let initialised =
            operation == .verify
            ? EVP_PKEY_verify_init(raw) : EVP_PKEY_sign_init(raw)
        guard initialised == 1 else {
            return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain()))
        }
        let sha256 = OpenSSLSHA256.shared.method
        switch algorithm {
        case .rsaPKCS1SHA256:
            guard EVP_PKEY_CTX_set_rsa_padding(raw, RSA_PKCS1_PADDING) == 1,
                EVP_PKEY_CTX_set_signature_md(raw, sha256) == 1
            else { return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain())) }
        case .rsaPSSSHA256:
            guard EVP_PKEY_CTX_set_rsa_padding(raw, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_signature_md(raw, sha256) == 1,
                EVP_PKEY_CTX_set_rsa_mgf1_md(raw, sha256) == 1
            else { return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain())) }
            switch operation {
            case .verify:
                // Accept any salt length, so signatures from `openssl dgst
                // -sigopt rsa_padding_mode:pss` (maximum salt) and from
                // signers using a digest-sized salt both verify. An RSA-PSS key
                // whose parameters fix a minimum salt refuses "auto"; it then
                // keeps the salt length its parameters demand.
                if EVP_PKEY_CTX_set_rsa_pss_saltlen(raw, RSA_PSS_SALTLEN_AUTO) != 1 {
                    OpenSSLErrorQueue.clear()
                }
            case .sign:
                guard EVP_PKEY_CTX_set_rsa_pss_saltlen(raw, Int32(OpenSSLSHA256.byteCount)) == 1
                else { return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain())) }
            }
        case .ecdsaP256SHA256:
            guard EVP_PKEY_CTX_set_signature_md(raw, sha256) == 1
            else { return .failure(SetupFailure(reason: OpenSSLErrorQueue.drain())) }
        case .ed25519:
            break
        }
        return .success(context)
    }

    /// Why a context could not be set up, in OpenSSL's words.
    struct SetupFailure: Error {
        var reason: String
    }
}
