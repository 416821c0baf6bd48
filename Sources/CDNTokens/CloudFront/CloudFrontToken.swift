/// Where a CloudFront token travels: in the signed URL's query, or in cookies.
/// The values are the same; the names differ (`Expires` / `CloudFront-Expires`).
public enum CloudFrontCarrier: String, Sendable, Hashable, CaseIterable {
    case query
    case cookie

    /// The name of `parameter` (`Expires`, `Policy`, `Signature`, `Key-Pair-Id`,
    /// `Hash-Algorithm`) on this carrier.
    func name(_ parameter: String) -> String {
        self == .query ? parameter : "CloudFront-" + parameter
    }
}

/// The digest a signature is made over the policy with: `Hash-Algorithm`
/// (`CloudFront-Hash-Algorithm`); SHA-1 when the parameter is absent, which is
/// what botocore and every older signer make.
public enum CloudFrontHashAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
}

/// A CloudFront signed URL's or signed cookies' parameters, read strictly: the
/// policy (canned: `Expires`; custom: `Policy`), the signature, the key pair's
/// id and the hash algorithm. Unverified: ``verify(keys:facts:)`` makes the proof.
public struct CloudFrontToken: Sendable, Hashable {
    /// What the signature covers.
    public enum Policy: Sendable, Hashable {
        /// A canned policy: the signature covers the policy botocore builds from
        /// the URL asked for and this time (`Expires`), rebuilt by the reader.
        case canned(expires: Int64)
        /// A custom policy: the bytes carried (the signature covers exactly
        /// these) and what they say.
        case custom(CloudFrontPolicy, bytes: [UInt8])
    }

    public let carrier: CloudFrontCarrier
    public let policy: Policy
    public let signature: [UInt8]
    /// `Key-Pair-Id`: the id of the CloudFront public key that verifies it.
    public let keyPairID: String
    /// `Hash-Algorithm` as written, or nil when absent (SHA-1).
    public let hashAlgorithm: CloudFrontHashAlgorithm?

    /// The longest signature read (an RSA-4096 signature is 512 bytes).
    public static let maximumSignatureBytes = 1024
    /// The parameter names of a token, without a carrier's prefix.
    package static let parameters = ["Expires", "Policy", "Signature", "Key-Pair-Id", "Hash-Algorithm"]

    /// Unchecked: for the issuer, and for tests that tamper with a part. Readers
    /// use ``init(queryPairs:)`` and ``init(cookiePairs:)``.
    package init(
        carrier: CloudFrontCarrier,
        policy: Policy,
        signature: [UInt8],
        keyPairID: String,
        hashAlgorithm: CloudFrontHashAlgorithm? = nil
    ) {
        self.carrier = carrier
        self.policy = policy
        self.signature = signature
        self.keyPairID = keyPairID
        self.hashAlgorithm = hashAlgorithm
    }

    /// Reads a signed URL's query pairs, names and values as written (CloudFront's
    /// values need no percent-escaping, so an escaped one is refused, not decoded).
    /// Pairs with other names are the URL's own and are left alone.
    public init(queryPairs: [CDNField]) throws(CDNRefusal) {
        try self.init(pairs: queryPairs, carrier: .query)
    }

    /// Reads cookie pairs (from a `Cookie:` line). Cookies with other names are
    /// someone else's and are left alone.
    public init(cookiePairs: [CDNField]) throws(CDNRefusal) {
        try self.init(pairs: cookiePairs, carrier: .cookie)
    }

    private init(pairs: [CDNField], carrier: CloudFrontCarrier) throws(CDNRefusal) {
        var found: [String: String] = [:]
        for pair in pairs {
            guard let parameter = Self.parameters.first(where: { carrier.name($0).utf8.elementsEqual(pair.name.utf8) }) else { continue }
            guard found.updateValue(pair.value, forKey: parameter) == nil else {
                throw .format("'\(pair.name)' appears twice; an edge and a reader could each take a different one")
            }
        }
        let expires = found["Expires"]
        let policyText = found["Policy"]
        let policy: Policy
        switch (expires, policyText) {
        case (let expires?, nil):
            policy = .canned(expires: try Self.time(expires, field: carrier.name("Expires")))
        case (nil, let text?):
            let bytes = try CloudFrontBase64.decode(text, field: carrier.name("Policy"))
            policy = .custom(try CloudFrontPolicy(json: bytes), bytes: bytes)
        case (.some, .some):
            throw .format(
                "both '\(carrier.name("Expires"))' (a canned policy) and '\(carrier.name("Policy"))' (a custom one); "
                    + "two readings are possible, so neither is used"
            )
        case (nil, nil):
            throw .format("neither '\(carrier.name("Expires"))' nor '\(carrier.name("Policy"))': no CloudFront policy")
        }
        guard let signatureText = found["Signature"] else { throw .format("no '\(carrier.name("Signature"))'") }
        let signature = try CloudFrontBase64.decode(signatureText, field: carrier.name("Signature"))
        guard signature.count <= Self.maximumSignatureBytes else {
            throw .format("'\(carrier.name("Signature"))' holds \(signature.count) bytes, over the limit of \(Self.maximumSignatureBytes)")
        }
        guard let keyPairID = found["Key-Pair-Id"] else { throw .format("no '\(carrier.name("Key-Pair-Id"))'") }
        try Self.checkKeyPairID(keyPairID, field: carrier.name("Key-Pair-Id"))
        var hashAlgorithm: CloudFrontHashAlgorithm? = nil
        if let text = found["Hash-Algorithm"] {
            guard let algorithm = CloudFrontHashAlgorithm.allCases.first(where: { $0.rawValue.utf8.elementsEqual(text.utf8) }) else {
                throw .format("'\(carrier.name("Hash-Algorithm"))' is '\(text)', neither SHA1 nor SHA256")
            }
            hashAlgorithm = algorithm
        }
        self.init(carrier: carrier, policy: policy, signature: signature, keyPairID: keyPairID, hashAlgorithm: hashAlgorithm)
    }

    /// The parameters as the carrier writes them, in botocore's order
    /// (`Expires` or `Policy`, `Signature`, `Key-Pair-Id`), then `Hash-Algorithm`
    /// when present. Reading them back gives an equal token.
    public var pairs: [CDNField] {
        var out: [CDNField] = []
        switch policy {
        case .canned(let expires): out.append(CDNField(carrier.name("Expires"), String(expires)))
        case .custom(_, let bytes): out.append(CDNField(carrier.name("Policy"), CloudFrontBase64.encode(bytes)))
        }
        out.append(CDNField(carrier.name("Signature"), CloudFrontBase64.encode(signature)))
        out.append(CDNField(carrier.name("Key-Pair-Id"), keyPairID))
        if let hashAlgorithm { out.append(CDNField(carrier.name("Hash-Algorithm"), hashAlgorithm.rawValue)) }
        return out
    }

    /// The same values on the other carrier.
    public func carried(by carrier: CloudFrontCarrier) -> CloudFrontToken {
        CloudFrontToken(carrier: carrier, policy: policy, signature: signature, keyPairID: keyPairID, hashAlgorithm: hashAlgorithm)
    }

    /// For display: ``pairs``, then for a custom policy what it says, under the
    /// names the policy writes (`Resource`, `DateLessThan`, `DateGreaterThan`,
    /// `IpAddress`). Raw text: whoever prints it escapes it.
    public var fields: [CDNField] {
        var out = pairs
        if case .custom(let policy, _) = policy {
            out.append(CDNField("Resource", policy.resource))
            out.append(CDNField("DateLessThan", String(policy.dateLessThan)))
            if let start = policy.dateGreaterThan { out.append(CDNField("DateGreaterThan", String(start))) }
            if let range = policy.ipAddress { out.append(CDNField("IpAddress", range.text)) }
        }
        return out
    }

    /// The latest `DateLessThan` the token's signature allows.
    public var expires: Int64 {
        switch policy {
        case .canned(let expires): expires
        case .custom(let policy, _): policy.dateLessThan
        }
    }

    // MARK: - Value rules

    /// Seconds since 1970 as decimal digits without a sign or leading zero, at
    /// most ``CloudFrontPolicy/latestTime``.
    static func time(_ text: String, field: String) throws(CDNRefusal) -> Int64 {
        let digits = Array(text.utf8)
        guard (1...12).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            digits.first != UInt8(ascii: "0") || digits.count == 1,
            let value = Int64(text), value <= CloudFrontPolicy.latestTime
        else {
            throw .format("'\(field)' is not seconds since 1970 (decimal digits, at most \(CloudFrontPolicy.latestTime))")
        }
        return value
    }

    /// A key pair id is ASCII letters and digits (CloudFront's are like
    /// `K2JCJMDEHXQW5F`): written raw into a query and a cookie, it must need no escaping.
    static func checkKeyPairID(_ id: String, field: String) throws(CDNRefusal) {
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy(\.isASCIILetterOrDigit) else {
            throw .format("'\(field)' is not 1 to 128 ASCII letters and digits")
        }
    }
}
