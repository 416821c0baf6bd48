import EntitlementTokens

/// The keys a read-back CDN token is verified with, for one kind: loaded
/// from a key file as the kind needs it (a hex HMAC key for `akamai` and a
/// CAT's MAC, a PEM public or private key for `cloudfront` and a CAT's ES256,
/// a secret file and its expression for `nginx-secure-link`), or taken from
/// a profile, which holds them all (docs/DESIGN.md#reading-cdn-tokens-back).
public struct CDNVerificationKeys: Sendable {
    enum Material: Sendable {
        case akamai([EdgeAuthKey])
        /// Public keys by `Key-Pair-Id`; `unnamed` is a key given without an
        /// id, taken as the key of whatever id the token names.
        case cloudfront(named: [String: PublicKey], unnamed: PublicKey?)
        case cat([CATKey], issuer: String?, audience: String?)
        case secureLink(SecureLinkExpression, secrets: [[UInt8]])
    }

    public let kind: CDNTokenKind
    /// How a report names the keys: the key file, or the profile.
    public let label: String
    let material: Material
    /// The keys read under 2048 bits because the caller allowed it (`RSA-1024`), for a warning.
    public private(set) var insecureKeys: [String] = []

    init(kind: CDNTokenKind, label: String, material: Material) {
        self.kind = kind
        self.label = label
        self.material = material
    }

    /// The key in `bytes` (a file's content, named `source`) read as `kind`
    /// needs it. `keyID` is the `Key-Pair-Id` or the `kid` the key answers to;
    /// without one a CloudFront key verifies any `Key-Pair-Id` and a CAT key
    /// any `kid` (the key was named for this token). `secureLinkExpression` is
    /// the edge's `secure_link_md5`, the secret written `$secret`. `catAudience`
    /// is the `aud` a CAT must name (RFC 8392 §3.1.3: without one, a CAT that
    /// carries an `aud` is refused).
    /// Throws `INVALID_TOKEN_FORMAT` naming the file and what it lacks.
    /// `keyOptions` reach the PEM keys (CloudFront's): `allowsInsecureKeySizes`
    /// reads an RSA key under 2048 bits, for reading tokens only; issuing
    /// keeps RSA ≥ 2048 and P-256 (``CloudFrontIssuer``). Such keys are named
    /// in ``insecureKeys`` so a front end can warn.
    public init(
        kind: CDNTokenKind,
        keyFile bytes: [UInt8],
        source: String,
        keyID: String? = nil,
        secureLinkExpression: String? = nil,
        keyOptions: KeyLoadingOptions = .init(),
        catAudience: String? = nil
    ) throws(CDNRefusal) {
        func failed(_ reason: String) -> CDNRefusal { .format("\(source): \(reason)") }
        switch kind {
        case .akamai:
            do { material = .akamai([try EdgeAuthKey(hex: String(decoding: bytes, as: UTF8.self))]) } catch { throw failed(error.reason) }
        case .cat:
            do { material = .cat([try CATKey(keyFile: bytes, id: keyID, source: source)], issuer: nil, audience: catAudience) } catch {
                throw failed(error.reason)
            }
        case .cloudfront:
            let keys: [PublicKey]
            do { keys = try Self.publicKeys(bytes, source: source, options: keyOptions) } catch { throw failed(error.message) }
            guard keys.count == 1 else { throw failed("holds \(keys.count) keys; give the one CloudFront key") }
            let key = keys[0]
            if key.bits < KeyLoadingOptions.minimumRSABits, key.description.hasPrefix("RSA") { insecureKeys = ["RSA-\(key.bits)"] }
            if let keyID { try CloudFrontToken.checkKeyPairID(keyID, field: "the key id") }
            material = .cloudfront(named: keyID.map { [$0: key] } ?? [:], unnamed: keyID == nil ? key : nil)
        case .nginxSecureLink:
            guard let text = secureLinkExpression else {
                throw failed("an nginx-secure-link secret needs its secure_link_md5 expression (or a profile, which holds both)")
            }
            let expression: SecureLinkExpression
            do { expression = try SecureLinkExpression(parsing: text) } catch { throw .format("secure_link_md5: \(error.reason)") }
            let secret = SecretFileBytes.secret(of: bytes)
            guard !secret.isEmpty else { throw failed("the secret file is empty") }
            material = .secureLink(expression, secrets: [secret])
        }
        self.kind = kind
        label = source
    }

    /// A private key's public half, or the public keys or certificate a file holds.
    private static func publicKeys(_ bytes: [UInt8], source: String, options: KeyLoadingOptions) throws(KeyError) -> [PublicKey] {
        do { return [try SigningKey(bytes: bytes, source: source, options: options).publicKey] } catch  where error.code == .notAPrivateKey {
            return try PublicKey.keys(from: bytes, source: source, options: options)
        }
    }
}

extension CDNReading {
    /// Checks the token as its edge would, with `keys`, against `facts` (the
    /// URL asked for — the paste's own URL when `facts` names none —, the
    /// time, the viewer's IP), and throws the first
    /// refusal of that kind's verifier: `INVALID_SIGNATURE`, `TOKEN_EXPIRED`,
    /// `TOKEN_NOT_YET_VALID`, `URL_NOT_COVERED`, `IP_MISMATCH`,
    /// `UNSUPPORTED_CLAIM`, `INVALID_TOKEN_FORMAT`. An EdgeAuth token is
    /// checked with the HMAC its length names (SHA-256, SHA-1 or MD5): the
    /// key, not the token, decides whether it verifies.
    public func verify(keys: CDNVerificationKeys, facts given: CDNRequestFacts) throws(CDNRefusal) {
        var facts = given
        if facts.url == nil { facts.url = url }
        switch (token, keys.material) {
        case (.akamai(let token), .akamai(let keys)):
            let algorithm = EdgeAuthAlgorithm.allCases.first { $0.hmacHexLength == token.hmac.count * 2 } ?? .sha256
            try Self.eachKey(keys, none: "no EdgeAuth key is configured") { (key) throws(CDNRefusal) in
                try token.verify(key: key, facts: facts, algorithm: algorithm)
            }
        case (.cloudfront(let token), .cloudfront(var named, let unnamed)):
            if let unnamed, named[token.keyPairID] == nil { named[token.keyPairID] = unnamed }
            _ = try token.verify(keys: named, facts: facts)
        case (.cat(let token), .cat(let keys, let issuer, let audience)):
            _ = try token.verify(keys: keys, facts: facts, expectedIssuer: issuer, expectedAudience: audience)
        case (.secureLink(let token), .secureLink(let expression, let secrets)):
            try Self.eachKey(secrets, none: "no secure_link secret is configured") { (secret) throws(CDNRefusal) in
                try token.verify(expression: expression, secret: secret, facts: facts)
            }
        default:
            throw .format("a \(kind.rawValue) token, and the keys of \(keys.label) are for \(keys.kind.rawValue) tokens")
        }
    }

    /// Verifies with each key in turn (a profile's rotation): `INVALID_SIGNATURE`
    /// moves on to the next key, any other refusal is the answer, and when no
    /// key verifies the first key's refusal is.
    private static func eachKey<Key>(_ keys: [Key], none: String, _ verify: (Key) throws(CDNRefusal) -> Void) throws(CDNRefusal) {
        var failure: CDNRefusal? = nil
        for key in keys {
            do {
                try verify(key)
                return
            } catch {
                guard error.status == .invalidSignature else { throw error }
                failure = failure ?? error
            }
        }
        throw failure ?? CDNRefusal(.invalidSignature, none)
    }
}
