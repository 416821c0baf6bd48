internal import COpenSSL

/// Checks signatures for one public key, with the OpenSSL set-up done ahead.
///
/// Everything that does not depend on the message — parsing the key, choosing
/// padding and digest, initialising the operation — happens once, at load time
/// or the first time a pooled context is made. A verify is then one SHA-256
/// (shared across a key ring) and one `EVP_PKEY_verify` on a pooled context.
final class SignatureVerifier: Sendable {
    /// The key itself, for the other formats' digests (``PublicKey/isValidSignature(_:for:digest:)``).
    let key: OpenSSLKey
    private let algorithm: SignatureAlgorithm
    private let backend: Backend
    /// For RSA the only valid signature length (the modulus length).
    private let rsaSignatureLength: Int

    private enum Backend: Sendable {
        /// RSA, RSA-PSS, ECDSA: verify a SHA-256 digest via `EVP_PKEY_verify`.
        case digest(OpenSSLContextPool<PublicKeyOperationContext>)
        /// Ed25519: one-shot `EVP_DigestVerify` over the message.
        case message(OpenSSLContextPool<DigestOperationContext>)
    }

    /// Sets up verification and makes the first context, so a key that
    /// OpenSSL cannot use this way is refused when it is loaded, not on the
    /// first token.
    init(key: OpenSSLKey, algorithm: SignatureAlgorithm) throws(DigestSignatureSetup.SetupFailure) {
        self.key = key
        self.algorithm = algorithm
        self.rsaSignatureLength = key.maximumSignatureSize
        switch algorithm {
        case .rsaPKCS1SHA256, .rsaPSSSHA256, .ecdsaP256SHA256:
            let first = try DigestSignatureSetup.makeContext(
                for: key,
                algorithm: algorithm,
                operation: .verify
            ).get()
            backend = .digest(
                OpenSSLContextPool(first: first) {
                    switch DigestSignatureSetup.makeContext(for: key, algorithm: algorithm, operation: .verify) {
                    case .success(let context): return context
                    case .failure: return nil
                    }
                }
            )
        case .ed25519:
            guard let first = DigestOperationContext() else {
                throw DigestSignatureSetup.SetupFailure(reason: "out of memory")
            }
            backend = .message(OpenSSLContextPool(first: first) { DigestOperationContext() })
        }
    }

    /// True only when `signature` is a valid signature over `message`.
    /// `digest` caches SHA-256(`message`) across keys.
    func isValid(_ signature: Span<UInt8>, message: Span<UInt8>, digest: inout SignedMessageDigest) -> Bool {
        signature.withUnsafeBytes { signature in
            message.withUnsafeBytes { message in isValid(signature, message: message, digest: &digest) }
        }
    }

    private func isValid(
        _ signature: UnsafeRawBufferPointer,
        message: UnsafeRawBufferPointer,
        digest: inout SignedMessageDigest
    ) -> Bool {
        switch backend {
        case .digest(let pool):
            switch algorithm {
            case .rsaPKCS1SHA256, .rsaPSSSHA256:
                // A wrong length can never verify; answer before touching OpenSSL.
                guard signature.count == rsaSignatureLength else { return false }
                return verifyDigest(signature, message: message, digest: &digest, pool: pool)
            case .ecdsaP256SHA256:
                return verifyECDSA(signature, message: message, digest: &digest, pool: pool)
            case .ed25519:
                return false
            }
        case .message(let pool):
            guard signature.count == 64 else { return false }
            return verifyMessage(signature, message: message, pool: pool)
        }
    }

    private func verifyECDSA(
        _ signature: UnsafeRawBufferPointer,
        message: UnsafeRawBufferPointer,
        digest: inout SignedMessageDigest,
        pool: OpenSSLContextPool<PublicKeyOperationContext>
    ) -> Bool {
        if signature.count == ECDSASignatureEncoding.rawByteCount {
            let rawVerified = withUnsafeTemporaryAllocation(
                of: UInt8.self,
                capacity: ECDSASignatureEncoding.maximumDERByteCount
            ) { buffer in
                var output = MutableSpan(_unsafeElements: buffer)
                let length = ECDSASignatureEncoding.derFromRaw(
                    Span(_unsafeElements: signature.assumingMemoryBound(to: UInt8.self)),
                    into: &output
                )
                return verifyDigest(
                    UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[0..<length])),
                    message: message,
                    digest: &digest,
                    pool: pool
                )
            }
            if rawVerified { return true }
            // A DER signature can be 64 bytes long too (short r and s); it
            // starts SEQUENCE, length 62. Anything else was only ever raw.
            guard signature[0] == 0x30, signature[1] == 0x3e else { return false }
        }
        guard
            (ECDSASignatureEncoding.minimumDERByteCount...ECDSASignatureEncoding.maximumDERByteCount)
                .contains(signature.count)
        else { return false }
        return verifyDigest(signature, message: message, digest: &digest, pool: pool)
    }

    private func verifyDigest(
        _ signature: UnsafeRawBufferPointer,
        message: UnsafeRawBufferPointer,
        digest: inout SignedMessageDigest,
        pool: OpenSSLContextPool<PublicKeyOperationContext>
    ) -> Bool {
        let status = digest.withSHA256(of: message) { hash in
            pool.withContext { context in
                EVP_PKEY_verify(
                    context.pointer,
                    signature.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    signature.count,
                    hash.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    hash.count
                )
            }
        }
        return Self.succeeded(status ?? nil)
    }

    private func verifyMessage(
        _ signature: UnsafeRawBufferPointer,
        message: UnsafeRawBufferPointer,
        pool: OpenSSLContextPool<DigestOperationContext>
    ) -> Bool {
        let status = pool.withContext { context -> Int32 in
            // Re-initialised on every use: OpenSSL documents a one-shot
            // `EVP_DigestVerify` as ending the operation, and later releases
            // refuse a second call on the same context. The re-init costs
            // under 1 µs against ~100 µs for the Ed25519 verify itself.
            guard EVP_DigestVerifyInit(context.pointer, nil, nil, nil, key.pointer) == 1 else {
                return -1
            }
            return EVP_DigestVerify(
                context.pointer,
                signature.baseAddress?.assumingMemoryBound(to: UInt8.self),
                signature.count,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                message.count
            )
        }
        return Self.succeeded(status)
    }

    /// Idle pooled contexts (tests).
    var idleContextCount: Int {
        switch backend {
        case .digest(let pool): pool.idleCount
        case .message(let pool): pool.idleCount
        }
    }

    /// Only an explicit 1 is success: 0 means "bad signature", negative
    /// means OpenSSL could not even check (garbage DER, internal error).
    /// Either failure leaves reasons on the thread's error queue; clear them
    /// so they are not blamed on a later, unrelated call.
    private static func succeeded(_ status: Int32?) -> Bool {
        if status == 1 { return true }
        OpenSSLErrorQueue.clear()
        return false
    }
}
