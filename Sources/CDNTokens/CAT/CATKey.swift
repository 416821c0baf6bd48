import EntitlementTokens

/// A key a Common Access Token is made or checked with, and its id (the
/// COSE `kid`, written as the UTF-8 of the id). The key decides the
/// algorithm: an HMAC key is HMAC 256/256 in COSE_Mac0, a P-256 key ES256 in
/// COSE_Sign1 (docs/DESIGN.md#the-cdn-exchange).
public struct CATKey: Sendable {
    enum Material: Sendable {
        case hmac([UInt8])
        case signing(SigningKey)
        case verifying(PublicKey)
    }

    let material: Material
    /// The key's id; nil for a key that is tried when no key has a token's `kid`.
    public let id: String?

    /// The shortest HMAC key read: 16 bytes (Akamai-style property settings
    /// make 32 hex digits; a shorter secret can be searched for).
    public static let minimumHMACKeyBytes = 16

    /// An HMAC key written as hex text (a key file's content; white space at
    /// either end, such as a final newline, is ignored).
    public init(hmacHex text: String, id: String?) throws(CDNRefusal) {
        guard let bytes = CDNHex.bytes(Array(text.utf8).trimmingASCIIWhitespace()) else {
            throw .format("an HMAC key for a CAT is hex text (an even number of 0-9, a-f digits)")
        }
        guard bytes.count >= Self.minimumHMACKeyBytes else {
            throw .format("an HMAC key of \(bytes.count) bytes; a CAT key has at least \(Self.minimumHMACKeyBytes)")
        }
        self.init(material: .hmac(bytes), id: id)
    }

    /// A key file's content, read as its kind says: hex text (white space
    /// aside) is an HMAC key; anything else a P-256 key in PEM or DER. The
    /// one reading of a CAT key file, for a profile's `key`, the gate's
    /// `--cat-key` and `tokeninspect --key` alike.
    public init(keyFile bytes: [UInt8], id: String?, source: String) throws(CDNRefusal) {
        let isHexText = bytes.allSatisfy { ByteRules.hexValue($0) != nil || $0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09 }
        if isHexText {
            try self.init(hmacHex: String(decoding: bytes, as: UTF8.self), id: id)
        } else {
            try self.init(pem: bytes, id: id, source: source)
        }
    }

    /// An HMAC key of any length, for other people's published test vectors
    /// (node-cat's and the `common-access-token` crate's use a 7-byte key);
    /// never for a profile.
    package init(insecureHMACKeyBytes bytes: [UInt8], id: String?) {
        self.init(material: .hmac(bytes), id: id)
    }

    /// A P-256 key in PEM (or DER): a private key signs and verifies; a public
    /// key or certificate verifies only.
    public init(pem bytes: [UInt8], id: String?, source: String) throws(CDNRefusal) {
        var signingKey: SigningKey? = nil
        do { signingKey = try SigningKey(bytes: bytes, source: source) } catch {
            // Not a private key: a public key or a certificate, read below.
            guard error.code == .notAPrivateKey else { throw .format("\(source): \(error.message)") }
        }
        if let signingKey {
            try self.init(signingKey: signingKey, id: id)
            return
        }
        let keys: [PublicKey]
        do { keys = try PublicKey.keys(from: bytes, source: source) } catch { throw .format("\(source): \(error.message)") }
        guard keys.count == 1 else { throw .format("\(source) holds \(keys.count) keys; a CAT key file holds one") }
        try self.init(publicKey: keys[0], id: id)
    }

    /// An ES256 signing key (P-256 only).
    public init(signingKey: SigningKey, id: String?) throws(CDNRefusal) {
        guard signingKey.algorithm == .ecdsaP256SHA256 else {
            throw .format("\(signingKey.publicKey.source): a \(signingKey.algorithm.rawValue) key; a CAT signs with ES256 (a P-256 key)")
        }
        self.init(material: .signing(signingKey), id: id)
    }

    /// An ES256 verification key (P-256 only).
    public init(publicKey: PublicKey, id: String?) throws(CDNRefusal) {
        guard publicKey.algorithm == .ecdsaP256SHA256 else {
            throw .format("\(publicKey.source): a \(publicKey.algorithm.rawValue) key; a CAT is verified with ES256 (a P-256 key)")
        }
        self.init(material: .verifying(publicKey), id: id)
    }

    private init(material: Material, id: String?) {
        self.material = material
        self.id = id
    }

    /// The one algorithm this key makes or checks.
    public var algorithm: COSEAlgorithm {
        switch material {
        case .hmac: .hmacSHA256
        case .signing, .verifying: .es256
        }
    }

    /// True when the key can issue tokens (an HMAC key or a private key).
    public var canIssue: Bool {
        if case .verifying = material { return false }
        return true
    }

    /// How refusals name the key: `kid "edge-1" (HMAC 256/256)`.
    var label: String { (id.map { "kid \"\($0)\"" } ?? "a key without an id") + " (\(algorithm.name))" }
}
