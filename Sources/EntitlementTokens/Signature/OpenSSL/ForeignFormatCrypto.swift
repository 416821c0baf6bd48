internal import COpenSSL

/// The primitives other people's token formats are made with, for the
/// `CDNTokens` module of this package: Akamai EdgeAuth's HMAC, CloudFront's
/// RSA with SHA-1, the Common Access Token's COSE (HMAC-SHA-256, ES256 as raw
/// `r‖s`, SHA-256 and SHA-512/256 hashes in `catu`), nginx's MD5.
///
/// `package`, never public: the library's own tokens choose none of these
/// (the key decides, and SHA-1 or MD5 never verifies an entitlement token).
/// Every call sets up its own context (HMAC-SHA-256 its own two pads); none is on
/// the XML token's path.
package enum ForeignDigest: Sendable, Hashable, CaseIterable {
    case sha256, sha1, md5, sha512, sha512_256

    var method: OpaquePointer? {
        switch self {
        case .sha256: EVP_sha256()
        case .sha1: EVP_sha1()
        case .md5: EVP_md5()
        case .sha512: EVP_sha512()
        case .sha512_256: EVP_sha512_256()
        }
    }

    /// The digest's length in bytes.
    package var byteCount: Int {
        switch self {
        case .sha256, .sha512_256: 32
        case .sha1: 20
        case .md5: 16
        case .sha512: 64
        }
    }

    /// The digest of `message`, or nil if OpenSSL fails (allocation failure).
    package func digest(of message: [UInt8]) -> [UInt8]? {
        guard let method else { return nil }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(message, message.count, &output, &length, method, nil) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(output[0..<Int(length)])
    }

    /// HMAC (RFC 2104) of `message` under `key` with this digest, or nil if OpenSSL fails.
    package func hmac(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        // OpenSSL's one-shot HMAC fetches its MAC and digest on every call; SHA-256,
        // what the CDN tokens the gate issues use, is keyed here from two hashed pads.
        if self == .sha256 { return HMACSHA256Key(key).authenticationCode(for: message).bytes }
        guard let method else { return nil }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty key is a valid HMAC key; OpenSSL wants a non-null pointer for it.
        let keyBytes = key.isEmpty ? [0] : key
        let done = keyBytes.withUnsafeBufferPointer { bytes in
            HMAC(method, bytes.baseAddress, Int32(key.count), message, message.count, &output, &length) != nil
        }
        guard done else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(output[0..<Int(length)])
    }
}

/// Byte comparisons whose time does not depend on where two MACs differ.
package enum ConstantTime {
    /// True when `a` and `b` have the same length and bytes; the time taken
    /// depends on the length only.
    package static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return CRYPTO_memcmp(a, b, a.count) == 0
    }
}

extension SigningKey {
    /// An RSA PKCS#1 v1.5 signature over `message` with `digest` (CloudFront
    /// signs SHA-1 or SHA-256), whatever digest the key signs tokens with.
    package func pkcs1Signature(for message: [UInt8], digest: ForeignDigest) throws(KeyError) -> [UInt8] {
        let rsaDigest: RSAOperations.Digest
        switch digest {
        case .sha1: rsaDigest = .sha1
        case .sha256: rsaDigest = .sha256
        default: throw KeyError(.signingFailed, publicKey.source, "RSA PKCS#1 v1.5 is made here with SHA-1 or SHA-256 only")
        }
        switch RSAOperations.pkcs1Signature(for: message, key: privateKey, digest: rsaDigest) {
        case .success(let signature): return signature
        case .failure(let failure): throw KeyError(.signingFailed, publicKey.source, "cannot sign: \(failure.reason)")
        }
    }

    /// An ECDSA P-256 signature with SHA-256 as the raw 64-byte `r‖s` that
    /// COSE (RFC 9053 §2.1) and JOSE carry.
    package func rawECDSASignature(for message: [UInt8]) throws(KeyError) -> [UInt8] {
        guard algorithm == .ecdsaP256SHA256 else {
            throw KeyError(.signingFailed, publicKey.source, "a \(algorithm.rawValue) key cannot sign ES256")
        }
        let der = try signature(for: message)
        guard let raw = ECDSASignatureEncoding.raw(fromDER: der, width: 32) else {
            throw KeyError(.signingFailed, publicKey.source, "OpenSSL's ECDSA signature is not DER ECDSA-Sig-Value")
        }
        return raw
    }
}

extension PublicKey {
    /// True only when `signature` is a valid signature by this key over
    /// `message` hashed with `digest`: RSA PKCS#1 v1.5, or ECDSA (DER) for a
    /// P-256 key. CloudFront's readers take SHA-1 and SHA-256; the key's own
    /// algorithm for tokens plays no part. Never traps on hostile input.
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8], digest: ForeignDigest) -> Bool {
        let key = storage.verifier.key
        switch algorithm {
        case .rsaPKCS1SHA256:
            switch digest {
            case .sha1: return RSAOperations.isValidPKCS1Signature(signature, message: message, key: key, digest: .sha1)
            case .sha256: return RSAOperations.isValidPKCS1Signature(signature, message: message, key: key, digest: .sha256)
            default: return false
            }
        case .ecdsaP256SHA256:
            guard digest == .sha1 || digest == .sha256, let method = digest.method,
                let context = DigestOperationContext()
            else { return false }
            guard EVP_DigestVerifyInit(context.pointer, nil, method, nil, key.pointer) == 1 else {
                OpenSSLErrorQueue.clear()
                return false
            }
            return context.verify(signature, over: message)
        case .rsaPSSSHA256, .ed25519:
            return false
        }
    }
}
