import EntitlementTokens

/// How an operator tells one CDN key from another without seeing it
/// (`tokengate check`): lowercase hex SHA-256 of the public key's DER
/// `SubjectPublicKeyInfo` for a key pair (the value ``PublicKey/sha256Fingerprint``
/// and `openssl pkey -pubout -outform DER | sha256sum` give), and of the key's
/// bytes as used for a shared secret (a hex key decoded, a secret file by the
/// secret-file rule), which both ends of the secret can compute.
package enum CDNKeyFingerprint {
    package static func ofSecret(_ bytes: [UInt8]) -> String {
        let digest = ForeignDigest.sha256.digest(of: bytes) ?? []
        return digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 0x10 ? "0" + text : text
        }.joined()
    }
}

extension CATKey {
    /// See ``CDNKeyFingerprint``.
    package var fingerprint: String {
        switch material {
        case .hmac(let bytes): CDNKeyFingerprint.ofSecret(bytes)
        case .signing(let key): key.publicKey.sha256Fingerprint
        case .verifying(let key): key.sha256Fingerprint
        }
    }

    /// An HMAC key: a secret both ends hold, which is counted and never
    /// fingerprinted where others may read (`/metrics`).
    package var isSharedSecret: Bool {
        if case .hmac = material { true } else { false }
    }

    /// "HMAC 256/256", "ES256 (P-256) private", "ES256 (P-256) public".
    package var kindDescription: String {
        switch material {
        case .hmac: "HMAC 256/256 secret"
        case .signing: "ES256 (P-256) private key"
        case .verifying: "ES256 (P-256) public key"
        }
    }
}

extension CDNProfile {
    /// The fingerprints of the profile's key pairs (CloudFront's, a CAT's
    /// ES256), and the number of its shared secrets (EdgeAuth, secure_link,
    /// a CAT's HMAC keys).
    package var keyInventory: (publicKeys: [String], secrets: Int) {
        switch keys {
        case .akamai(let keys): ([], keys.count)
        case .cloudfront: (keyFingerprints, 0)
        case .cat(let keys): (keys.filter { !$0.isSharedSecret }.map(\.fingerprint), keys.count { $0.isSharedSecret })
        case .secureLink(_, let secrets): ([], secrets.count)
        }
    }

    /// One fingerprint per `key` line, in the profile's order (the first signs).
    package var keyFingerprints: [String] {
        switch keys {
        case .akamai(let keys): keys.map { CDNKeyFingerprint.ofSecret($0.bytes) }
        case .cloudfront(_, let verifiers): settings.keys.map { verifiers[$0.id ?? ""]?.sha256Fingerprint ?? "" }
        case .cat(let keys): keys.map(\.fingerprint)
        case .secureLink(_, let secrets): secrets.map(CDNKeyFingerprint.ofSecret)
        }
    }
}
