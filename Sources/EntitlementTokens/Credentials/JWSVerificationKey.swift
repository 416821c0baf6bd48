internal import COpenSSL

/// A trusted public key as a software statement's verifier uses it: the key,
/// and what a JWKS said about it (`kid`, `alg`, thumbprints).
///
/// Keys come from two places only: the key ring (docs/DESIGN.md#signatures-and-keys: PEM, DER,
/// certificates, folders; each re-read from its SubjectPublicKeyInfo, so every
/// rule of the ring has already been applied) and JWKS files (``JSONWebKeySet``).
/// Never from the statement itself: `jwk`, `jku`, `x5u` and `x5c` name keys the
/// *signer* chose, so trusting them would let anyone sign.
public struct JWSVerificationKey: Sendable, CustomStringConvertible {
    let key: OpenSSLKey
    let family: JWSKeyFamily
    /// True for an RSA-PSS key (restricted by its type to PSS).
    let isPSSRestricted: Bool
    /// The JWK's `kid`; nil for a key from the ring.
    public let keyID: String?
    /// The JWK's `alg`; when present, the statement must name exactly this one.
    public let algorithm: JWSAlgorithm?
    /// The JWK's `x5t` and `x5t#S256` (Base64url certificate thumbprints): they
    /// only select among trusted keys, never add one.
    let thumbprints: [String: String]
    /// The file the key came from.
    public let source: String
    /// Lowercase hex SHA-256 of the DER SubjectPublicKeyInfo.
    public let sha256Fingerprint: String

    /// "RSA-2048 key 'k1' from keys.jwks (SHA-256 3fa1…)".
    public var description: String {
        let bits = family == .rsa ? "RSA\(isPSSRestricted ? "-PSS" : "")-\(key.bits)" : family.rawValue
        let kid = keyID.map { " \(TerminalText.quoted($0))" } ?? ""
        return "\(bits) key\(kid) from \(source) (SHA-256 \(sha256Fingerprint))"
    }

    /// The ring's key, for statements: the same key, re-read from its DER.
    public init(_ publicKey: PublicKey) throws(KeyError) {
        try self.init(
            subjectPublicKeyInfo: publicKey.derRepresentation,
            source: publicKey.source,
            keyID: nil,
            algorithm: nil,
            thumbprints: [:],
            options: KeyLoadingOptions(allowsInsecureKeySizes: true)
        )
    }

    /// Reads a SubjectPublicKeyInfo under the ring's rules (degenerate keys refused
    /// whatever the options; RSA under 2048 bits only when allowed), plus P-384,
    /// which only statements accept (ES384).
    init(
        subjectPublicKeyInfo der: [UInt8],
        source: String,
        keyID: String?,
        algorithm: JWSAlgorithm?,
        thumbprints: [String: String],
        options: KeyLoadingOptions
    ) throws(KeyError) {
        guard let decoded = try KeyDecoding.publicKeys(from: der, source: source).first else {
            throw KeyError(.noKeysFound, source, "no key")
        }
        try self.init(
            decoded.key,
            source: source,
            keyID: keyID,
            algorithm: algorithm,
            thumbprints: thumbprints,
            options: options,
            label: keyID.map { "key \(TerminalText.quoted($0)): " } ?? ""
        )
    }

    /// Keys for software statements from key files and directories
    /// (docs/DESIGN.md#software-statements): every rule of the ring's loading (folders, certificates,
    /// degenerate keys refused, notices), plus P-384 keys for ES384, and a
    /// PKCS#12 file named in `paths` read for the public half of its private
    /// key, opened with `pkcs12Password` (asked only when one is named).
    ///
    /// - Parameter paths: key files and directories of them.
    /// - Parameter options: what else to accept (insecure sizes).
    /// - Parameter now: the instant certificate dates are compared with.
    /// - Parameter pkcs12Password: asked once, only when a PKCS#12 file is
    ///   named; nil refuses PKCS#12 files.
    /// - Returns: the keys in order, and the notices of the files skipped.
    public static func load(
        paths: [String],
        options: KeyLoadingOptions = .init(),
        now: TokenTimestamp = .now(),
        pkcs12Password: (() throws(KeyError) -> KeyPassword)? = nil
    )
        throws(KeyError) -> (keys: [JWSVerificationKey], notices: [KeyLoadNotice])
    {
        var keys: [JWSVerificationKey] = []
        var walk = KeyFileWalk(now: now, pkcs12Password: pkcs12Password)
        try walk.walk(paths) { (decoded, source) throws(KeyError) in
            keys.append(
                try JWSVerificationKey(
                    decoded.key,
                    source: source,
                    keyID: nil,
                    algorithm: nil,
                    thumbprints: [:],
                    options: options,
                    label: decoded.location.map { "\($0): " } ?? ""
                )
            )
        }
        return (keys, walk.notices)
    }

    private init(
        _ key: OpenSSLKey,
        source: String,
        keyID: String?,
        algorithm: JWSAlgorithm?,
        thumbprints: [String: String],
        options: KeyLoadingOptions,
        label: String
    ) throws(KeyError) {
        if key.isA("EC"), key.groupName == "secp384r1" {
            if let defect = DegenerateKeys.ecDefect(of: key) {
                throw KeyError(.degenerateKey, source, "\(label)EC P-384 key refused: \(defect); no option accepts such a key")
            }
            family = .ecP384
            isPSSRestricted = false
        } else {
            // Every other key goes through the ring's own policy (type, curve, size, degenerate keys).
            let profile = try KeyPolicy.profile(of: key, options: options, source: source, prefix: label)
            switch profile.algorithm {
            case .rsaPKCS1SHA256, .rsaPSSSHA256: family = .rsa
            case .ecdsaP256SHA256: family = .ecP256
            case .ed25519: family = .ed25519
            }
            isPSSRestricted = key.isA("RSA-PSS")
        }
        guard let spki = key.subjectPublicKeyInfoDER(), let fingerprint = OpenSSLSHA256.shared.hexDigest(of: spki) else {
            throw KeyError(.unsupportedFormat, source, "\(label)key cannot be re-encoded as SubjectPublicKeyInfo")
        }
        self.key = key
        self.keyID = keyID
        self.algorithm = algorithm
        self.thumbprints = thumbprints
        self.source = source
        sha256Fingerprint = fingerprint
    }

    /// Why this key cannot verify `algorithm`, or nil when it fits (docs/DESIGN.md#the-sdks-other-credentials):
    /// RS*/PS* need RSA (an RSA-PSS key only PS*), ES256 P-256, ES384 P-384,
    /// EdDSA Ed25519; a JWK's own `alg` must be the same.
    func misfit(for algorithm: JWSAlgorithm) -> String? {
        if let own = self.algorithm, own != algorithm {
            return "the statement names \(algorithm.rawValue) but the JWK of \(description) says alg \(own.rawValue)"
        }
        if algorithm.keyFamily != family {
            return "\(algorithm.rawValue) needs an \(algorithm.keyFamily.rawValue) key, and \(description) is \(family.rawValue)"
        }
        if isPSSRestricted && !algorithm.isPSS {
            return "\(algorithm.rawValue) needs PKCS#1 v1.5 padding, and \(description) is an RSA-PSS key (PSS only)"
        }
        return nil
    }

    func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        JOSESignatureOperation.isValid(signature, message: message, key: key, algorithm: algorithm)
    }
}
