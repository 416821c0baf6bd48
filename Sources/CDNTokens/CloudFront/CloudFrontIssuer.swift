import EntitlementTokens

/// What the issuer hands out: the signed URL and the same values as cookies.
public struct IssuedCloudFrontToken: Sendable, Hashable {
    /// The URL the player opens, signed (botocore's `generate_presigned_url` output).
    public let signedURL: String
    /// `CloudFront-Expires` or `CloudFront-Policy`, `CloudFront-Signature`,
    /// `CloudFront-Key-Pair-Id`, for a cookie carrier (attributes are the caller's).
    public let cookies: [CDNField]
    /// The policy signed (for a canned one, the policy CloudFront rebuilds).
    public let policy: CloudFrontPolicy
    /// Its exact bytes, as signed.
    public let signedPolicy: [UInt8]
    /// The token as its query carries it.
    public let token: CloudFrontToken
}

/// Issues CloudFront signed URLs and cookies exactly as botocore's
/// `CloudFrontSigner` makes them, so an operator can check the gate's output
/// with AWS's own tool: RSA PKCS#1 v1.5 with SHA-1 over the policy's bytes,
/// no `Hash-Algorithm` (docs/DESIGN.md#the-cdn-exchange).
public struct CloudFrontIssuer: Sendable {
    public let keyPairID: String
    private let key: SigningKey

    /// - Parameter key: an RSA private key of at least 2048 bits (CloudFront
    ///   takes RSA-2048 and ECDSA P-256 public keys; botocore signs RSA).
    /// - Parameter keyPairID: the id CloudFront gave the public key.
    public init(key: SigningKey, keyPairID: String) throws(CDNRefusal) {
        guard key.algorithm == .rsaPKCS1SHA256, key.publicKey.bits >= 2048 else {
            throw .format("a CloudFront signing key must be RSA (PKCS#1 v1.5) of at least 2048 bits, not \(key.publicKey.description)")
        }
        try CloudFrontToken.checkKeyPairID(keyPairID, field: "Key-Pair-Id")
        self.key = key
        self.keyPairID = keyPairID
    }

    /// A canned policy for a URL scope without a bound IP (the URL carries only
    /// `Expires`); otherwise a custom policy whose `Resource` is the URL (URL
    /// scope) or the origin and folder followed by `*` (folder scope), with
    /// `IpAddress` when `clientIP` is given: `/32` for IPv4 as botocore writes,
    /// `/128` for IPv6 (botocore's `/32` would admit a whole provider).
    /// `DateLessThan` is `now + lifetime`; no `DateGreaterThan` (the edge
    /// allows no skew, and a token must work the moment it is handed out).
    ///
    /// - Throws: `INVALID_TOKEN_FORMAT` for a URL that the policy would have to
    ///   escape (`"` or `\`) or that holds `*` (a wildcard in a policy),
    ///   a URL already carrying a CloudFront parameter, a lifetime that is not
    ///   positive, a time out of range, a client IP that is no address;
    ///   a refusal naming the key when signing fails.
    public func issue(_ parameters: CDNIssueParameters) throws(CDNRefusal) -> IssuedCloudFrontToken {
        let url = parameters.url
        let text = url.description
        guard PythonJSONString.needsNoEscaping(text), !text.utf8.contains(UInt8(ascii: "*")) else {
            throw .format(
                "the URL \(text) holds '\"', '\\' or '*', which a CloudFront policy would escape or read as a wildcard; it is refused rather than changed"
            )
        }
        if let clash = CloudFrontSignedURL.queryPairs(of: url).first(where: { pair in
            CloudFrontToken.parameters.contains { $0.utf8.elementsEqual(pair.name.utf8) }
        }) {
            throw .format("the URL \(text) already has a '\(clash.name)' parameter, which CloudFront reads as its own")
        }
        guard parameters.lifetime > 0, parameters.now >= 0, parameters.now <= CloudFrontPolicy.latestTime - parameters.lifetime else {
            throw .format("a lifetime of \(parameters.lifetime) s from \(parameters.now) is not a time CloudFront can be given")
        }
        let expires = parameters.expires
        let range = try parameters.clientIP.map { ip throws(CDNRefusal) in try CloudFrontIPRange(singleAddress: ip) }
        let canned = parameters.scope == .url && range == nil
        // A canned policy is signed over the URL as written (CloudFront rebuilds
        // it from the request); a custom policy's Resource is judged against the
        // path's one reading, so it is written in that reading.
        let resource = parameters.scope == .url ? (canned ? text : url.scopeURL) : url.origin + url.folderPath + "*"
        let policy = CloudFrontPolicy(resource: resource, dateLessThan: expires, ipAddress: range)
        let bytes = policy.json
        let signature: [UInt8]
        do {
            signature = try key.pkcs1Signature(for: bytes, digest: .sha1)
        } catch {
            throw .format("cannot sign with the key '\(keyPairID)': \(error)")
        }
        let token = CloudFrontToken(
            carrier: .query,
            policy: canned ? .canned(expires: expires) : .custom(policy, bytes: bytes),
            signature: signature,
            keyPairID: keyPairID
        )
        // botocore's `_build_url`: '&' when the URL already has a '?', else '?'.
        let separator = url.query == nil ? "?" : "&"
        let signedURL = text + separator + token.pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        return IssuedCloudFrontToken(
            signedURL: signedURL,
            cookies: token.carried(by: .cookie).pairs,
            policy: policy,
            signedPolicy: bytes,
            token: token
        )
    }
}
