/// The digest of a signed requestor ID's RSA PKCS#1 v1.5 signature: SHA-256 by
/// default, SHA-1 for registrations made before SHA-256 (`--digest sha1`).
public enum RequestorIDDigest: String, Sendable, Hashable, CaseIterable, Codable {
    case sha256, sha1

    var operation: RSAOperations.Digest {
        switch self {
        case .sha256: .sha256
        case .sha1: .sha1
        }
    }

    /// "SHA-256", "SHA-1".
    public var displayName: String { self == .sha256 ? "SHA-256" : "SHA-1" }
}

/// The proof a valid verdict carries: which requestor a trusted key signed.
public struct VerifiedSignedRequestorID: Sendable, Hashable {
    public let requestor: String
    public let digest: RequestorIDDigest
    /// The key that verified it.
    public let key: PublicKey

    init(requestor: String, digest: RequestorIDDigest, key: PublicKey) {
        self.requestor = requestor
        self.digest = digest
        self.key = key
    }
}

/// The answer for one signed requestor ID, in the statuses of docs/DESIGN.md#statuses:
/// `VALID_TOKEN`, `INVALID_SIGNATURE` (no trusted key signed this requestor
/// with this digest), `INVALID_REQUESTOR_ID` (no requestor to check against).
public struct SignedRequestorIDVerdict: Sendable {
    public let status: VerificationStatus
    /// For people; may quote input (escape it before a terminal or a log).
    public let reason: String
    public let id: SignedRequestorID
    /// The proof, exactly when ``status`` is `VALID_TOKEN`.
    public let verified: VerifiedSignedRequestorID?
}

/// Verifies signed requestor IDs against the programmer's public keys (the key
/// ring of docs/DESIGN.md#signatures-and-keys: PEM, DER, certificates, folders, rotation) and the expected requestor.
///
/// The signature covers only the requestor's UTF-8 bytes, so a signature for
/// another requestor and a forged one look the same: both are
/// `INVALID_SIGNATURE`. When the other digest would verify, the reason says so
/// (an old registration checked with the default digest).
public struct SignedRequestorIDVerifier: Sendable {
    public let ring: KeyRing
    public let digest: RequestorIDDigest

    public init(ring: KeyRing, digest: RequestorIDDigest = .sha256) {
        self.ring = ring
        self.digest = digest
    }

    /// Verifies `id` against `requestor`, or the requestor `id` carries.
    public func verify(_ id: SignedRequestorID, requestor: String? = nil) -> SignedRequestorIDVerdict {
        guard let requestor = requestor ?? id.requestor else {
            return SignedRequestorIDVerdict(
                status: .invalidRequestorID,
                reason: "no requestor to verify against: a signed requestor ID signs only the requestor ID, so give it (--requestor)",
                id: id,
                verified: nil
            )
        }
        let message = Array(requestor.utf8)
        if let key = firstKey(signing: id.signature, message: message, digest: digest) {
            return SignedRequestorIDVerdict(
                status: .validToken,
                reason: "signature over requestor '\(requestor)' (RSA PKCS#1 v1.5, \(digest.displayName)) verified by \(key.description)",
                id: id,
                verified: VerifiedSignedRequestorID(requestor: requestor, digest: digest, key: key)
            )
        }
        let other: RequestorIDDigest = digest == .sha256 ? .sha1 : .sha256
        if let key = firstKey(signing: id.signature, message: message, digest: other) {
            return SignedRequestorIDVerdict(
                status: .invalidSignature,
                reason:
                    "the signature over requestor '\(requestor)' uses \(other.displayName), not \(digest.displayName) as asked (--digest \(other.rawValue) accepts it); key \(key.description)",
                id: id,
                verified: nil
            )
        }
        let rsaKeys = ring.keys.filter { $0.algorithm == .rsaPKCS1SHA256 || $0.algorithm == .rsaPSSSHA256 }
        let which =
            rsaKeys.isEmpty
            ? "no RSA key is trusted (\(ring.keys.count) other keys)"
            : "none of the \(rsaKeys.count) trusted RSA keys verifies it"
        return SignedRequestorIDVerdict(
            status: .invalidSignature,
            reason:
                "not a signature over requestor '\(requestor)' (RSA PKCS#1 v1.5, \(digest.displayName)): \(which); a signature for another requestor looks the same",
            id: id,
            verified: nil
        )
    }

    private func firstKey(signing signature: [UInt8], message: [UInt8], digest: RequestorIDDigest) -> PublicKey? {
        for publicKey in ring.keys {
            guard let key = try? KeyDecoding.publicKeys(from: publicKey.derRepresentation, source: publicKey.source).first?.key
            else { continue }
            if RSAOperations.isValidPKCS1Signature(signature, message: message, key: key, digest: digest.operation) {
                return publicKey
            }
        }
        return nil
    }
}

extension ProgrammerPrivateKey {
    /// Signs `requestor` as the SDK expects (minting, tests and samples).
    public func signRequestorID(_ requestor: String, digest: RequestorIDDigest = .sha256) throws(KeyError) -> SignedRequestorID {
        switch RSAOperations.pkcs1Signature(for: Array(requestor.utf8), key: key, digest: digest.operation) {
        case .success(let signature): return SignedRequestorID(signature: signature, requestor: requestor)
        case .failure(let failure): throw KeyError(.signingFailed, source, "cannot sign the requestor ID: \(failure.reason)")
        }
    }
}
