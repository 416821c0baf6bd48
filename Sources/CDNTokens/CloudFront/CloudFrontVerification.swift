import EntitlementTokens

/// A CloudFront token whose signature verified and whose policy admits the
/// request: made only by ``CloudFrontToken/verify(keys:facts:)``, from the
/// bytes the signature covers.
public struct VerifiedCloudFrontToken: Sendable, Hashable {
    /// The policy as signed: a custom policy's own, or the canned policy rebuilt.
    public let policy: CloudFrontPolicy
    /// The exact bytes the signature covers.
    public let signedPolicy: [UInt8]
    public let keyPairID: String
    /// The digest the signature was checked with.
    public let hashAlgorithm: CloudFrontHashAlgorithm
    public let token: CloudFrontToken
}

extension CloudFrontToken {
    /// Checks the token as CloudFront would at `facts.now` for `facts.url` from
    /// `facts.clientIP`: the `Key-Pair-Id` selects the key; the signature
    /// (RSA PKCS#1 v1.5 with `Hash-Algorithm`'s digest, SHA-1 when absent; ECDSA
    /// P-256 with SHA-256) covers the policy's bytes; then `DateLessThan`,
    /// `DateGreaterThan`, `IpAddress` and `Resource`.
    ///
    /// Times are compared exactly, `facts.leeway` not applied: CloudFront allows
    /// no skew, so a reader that did would call valid a token the edge refuses.
    /// `DateLessThan` is exclusive (expired at that second); `DateGreaterThan`
    /// admits that second onward, as CloudFront documents ("on or after").
    ///
    /// The URL is compared whole (scheme, host, port, path, query), as CloudFront
    /// compares it: for a URL-carried token, without the signing parameters
    /// (they are removed from `facts.url` here, so the signed URL itself may be
    /// given). Without `facts.url` a custom policy's `Resource` is not checked,
    /// and a canned policy cannot be: its signature covers the URL.
    ///
    /// - Parameter keys: public keys by `Key-Pair-Id`.
    /// - Throws: `INVALID_SIGNATURE` (unknown key id, a key or digest that
    ///   cannot sign CloudFront's, a signature that does not verify),
    ///   `TOKEN_EXPIRED`, `TOKEN_NOT_YET_VALID`, `IP_MISMATCH`, `URL_NOT_COVERED`.
    public func verify(keys: [String: PublicKey], facts: CDNRequestFacts) throws(CDNRefusal) -> VerifiedCloudFrontToken {
        guard let key = keys.first(where: { $0.key.utf8.elementsEqual(keyPairID.utf8) })?.value else {
            throw CDNRefusal(.invalidSignature, "no key is configured for the Key-Pair-Id '\(keyPairID)'")
        }
        let requested: CDNURL? = try facts.url.map { url throws(CDNRefusal) in
            carrier == .query ? try CloudFrontSignedURL.removingSigningParameters(from: url) : url
        }
        let policy: CloudFrontPolicy
        let signed: [UInt8]
        switch self.policy {
        case .custom(let custom, let bytes):
            (policy, signed) = (custom, bytes)
        case .canned(let expires):
            guard let requested else {
                throw CDNRefusal(.invalidSignature, "a canned policy's signature covers the URL asked for, and no URL was given")
            }
            policy = CloudFrontPolicy(resource: requested.description, dateLessThan: expires)
            signed = policy.json
        }
        let digest = try digest(for: key)
        guard key.isValidSignature(signature, for: signed, digest: digest == .sha1 ? .sha1 : .sha256) else {
            let covered = if case .canned = self.policy { "the canned policy for \(policy.resource)" } else { "the policy" }
            throw CDNRefusal(.invalidSignature, "the signature does not verify over \(covered) with the key '\(keyPairID)' and \(digest.rawValue)")
        }
        if facts.now >= policy.dateLessThan {
            throw CDNRefusal(.tokenExpired, "DateLessThan is \(policy.dateLessThan) and now is \(facts.now)")
        }
        if let start = policy.dateGreaterThan, facts.now < start {
            throw CDNRefusal(.tokenNotYetValid, "DateGreaterThan is \(start) and now is \(facts.now)")
        }
        if let range = policy.ipAddress {
            guard let client = facts.clientIP else {
                throw CDNRefusal(.ipMismatch, "the policy is bound to \(range.text) and the viewer's IP is unknown")
            }
            guard range.contains(client) else {
                throw CDNRefusal(.ipMismatch, "the policy is bound to \(range.text), not \(client)")
            }
        }
        // A canned policy's Resource is the URL asked for, as written, and the
        // signature covers it: nothing is left to match. A custom policy's
        // pattern is matched against the path's one reading (unreserved escapes
        // decoded), in which the issuer writes its folders.
        if case .custom = self.policy, let requested, !CloudFrontResourcePattern(policy.resource).matches(requested.scopeURL) {
            throw CDNRefusal(.urlNotCovered, "the Resource \(policy.resource) does not cover \(requested.description)")
        }
        return VerifiedCloudFrontToken(policy: policy, signedPolicy: signed, keyPairID: keyPairID, hashAlgorithm: digest, token: self)
    }

    /// The digest for `key`: an RSA key takes `Hash-Algorithm` (SHA-1 when
    /// absent); a P-256 key signs SHA-256 only, so an explicit SHA1 is refused.
    private func digest(for key: PublicKey) throws(CDNRefusal) -> CloudFrontHashAlgorithm {
        switch key.algorithm {
        case .rsaPKCS1SHA256:
            return hashAlgorithm ?? .sha1
        case .ecdsaP256SHA256:
            guard hashAlgorithm != .sha1 else {
                throw CDNRefusal(
                    .invalidSignature,
                    "the key '\(keyPairID)' is ECDSA P-256, which CloudFront uses with SHA256, and the token names SHA1"
                )
            }
            return .sha256
        default:
            throw CDNRefusal(
                .invalidSignature,
                "the key '\(keyPairID)' is \(key.algorithm.rawValue); CloudFront verifies RSA PKCS#1 v1.5 and ECDSA P-256 keys"
            )
        }
    }
}
