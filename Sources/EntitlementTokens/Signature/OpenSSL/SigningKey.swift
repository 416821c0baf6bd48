internal import COpenSSL

/// A private key for minting tokens (tests, samples, staging servers).
///
/// Signing follows the same rule as verifying — the key decides the
/// algorithm — so a token minted here verifies with the matching public key
/// and nothing else needs to be configured. Signing is not on any hot path,
/// so each signature sets up its own OpenSSL context.
public struct SigningKey: Sendable {
    private let key: OpenSSLKey
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
        guard
            case .success(let context) = DigestSignatureSetup.makeContext(
                for: key,
                algorithm: algorithm,
                operation: .sign
            )
        else { return nil }
        var hash = [UInt8](repeating: 0, count: OpenSSLSHA256.byteCount)
        guard hash.withUnsafeMutableBytes({ OpenSSLSHA256.shared.digest(message, into: $0) }) else { return nil }
        var length = 0
        guard EVP_PKEY_sign(context.pointer, nil, &length, hash, hash.count) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context.pointer, &signature, &length, hash, hash.count) == 1 else { return nil }
        signature.removeLast(signature.count - length)
        return signature
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
