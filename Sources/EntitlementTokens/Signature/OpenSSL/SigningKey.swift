internal import COpenSSL

/// A private key for minting tokens (tests, samples, staging servers).
///
/// Signing follows the same rule as verifying — the key decides the
/// algorithm — so a token minted here verifies with the matching public key
/// and nothing else needs to be configured. The gate signs on a hot path (a
/// CAT ES256 or a CloudFront token per exchange), so a digest signature takes
/// a context from a pool, set up once, as verification does; Ed25519 signs
/// the message and sets up its own.
public struct SigningKey: Sendable {
    private let key: OpenSSLKey
    /// Contexts initialised to sign under ``algorithm`` (RSA, RSA-PSS, ECDSA),
    /// made on first use so loading a key behaves as before.
    private let signingContexts: OpenSSLContextPool<PublicKeyOperationContext>
    /// The private key, for the other formats' signatures (ForeignFormatCrypto.swift).
    var privateKey: OpenSSLKey { key }
    /// The public half, as a verifier would load it.
    public let publicKey: PublicKey

    /// The scheme this key signs with (the same as ``publicKey``'s).
    public var algorithm: SignatureAlgorithm { publicKey.algorithm }

    /// Loads one private key: PEM `PRIVATE KEY` (PKCS#8), `RSA PRIVATE KEY`,
    /// `EC PRIVATE KEY`, or DER PKCS#8. Sniffed by content.
    ///
    /// - Throws: ``KeyError``: `notAPrivateKey` when `bytes` holds only public
    ///   keys or certificates; `unsupportedFormat` for encrypted keys, more
    ///   than one private key, or unreadable bytes; and the size and type
    ///   rules of ``PublicKey``.
    public init(bytes: [UInt8], source: String, options: KeyLoadingOptions = .init()) throws(KeyError) {
        let key = try KeyDecoding.privateKey(from: bytes, source: source)
        guard let der = key.subjectPublicKeyInfoDER() else {
            throw KeyError(.unsupportedFormat, source, "cannot derive the public key")
        }
        // Re-decode the public half so signer and verifier use the very same
        // loading path (and the same size and type rules).
        guard let publicKey = try PublicKey.keys(from: der, source: source, options: options).first else {
            throw KeyError(.unsupportedFormat, source, "cannot derive the public key")
        }
        self.key = key
        self.publicKey = publicKey
        let algorithm = publicKey.algorithm
        self.signingContexts = OpenSSLContextPool(first: nil) {
            guard algorithm != .ed25519 else { return nil }
            switch DigestSignatureSetup.makeContext(for: key, algorithm: algorithm, operation: .sign) {
            case .success(let context): return context
            case .failure: return nil
            }
        }
    }

    /// Loads the private key in the file at `path`.
    public init(path: String, options: KeyLoadingOptions = .init()) throws(KeyError) {
        try self.init(bytes: KeyFiles.read(path), source: path, options: options)
    }

    /// Signs `message` under ``algorithm``. ECDSA signatures are DER, like
    /// `openssl dgst -sign`; RSA-PSS uses a 32-byte salt.
    public func signature(for message: [UInt8]) throws(KeyError) -> [UInt8] {
        let result = message.withUnsafeBytes { message in
            algorithm == .ed25519 ? signMessage(message) : signDigest(message)
        }
        guard let signature = result else {
            throw KeyError(
                .signingFailed,
                publicKey.source,
                "cannot sign with \(algorithm.rawValue): \(OpenSSLErrorQueue.drain())"
            )
        }
        return signature
    }

    private func signDigest(_ message: UnsafeRawBufferPointer) -> [UInt8]? {
        var hash = [UInt8](repeating: 0, count: OpenSSLSHA256.byteCount)
        guard hash.withUnsafeMutableBytes({ OpenSSLSHA256.shared.digest(message, into: $0) }) else { return nil }
        let signature = signingContexts.withContext { context -> [UInt8]? in
            // EVP_PKEY_get_size: the modulus for RSA, the longest DER for ECDSA.
            var length = key.maximumSignatureSize
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_sign(context.pointer, &signature, &length, hash, hash.count) == 1 else { return nil }
            signature.removeLast(signature.count - length)
            return signature
        }
        return signature ?? nil
    }

    private func signMessage(_ message: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let context = DigestOperationContext(),
            EVP_DigestSignInit(context.pointer, nil, nil, nil, key.pointer) == 1
        else { return nil }
        let bytes = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length = 0
        guard EVP_DigestSign(context.pointer, nil, &length, bytes, message.count) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context.pointer, &signature, &length, bytes, message.count) == 1 else { return nil }
        signature.removeLast(signature.count - length)
        return signature
    }
}
