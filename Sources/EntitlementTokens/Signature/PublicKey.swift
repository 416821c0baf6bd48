/// A trusted public key, parsed once and shareable across threads.
///
/// Loading does all the work that does not depend on a token: decoding,
/// deciding the algorithm (the key decides, never the token), checking the
/// size, and preparing OpenSSL contexts. A verify then only hashes and checks,
/// which is what a media server needs before each stream starts.
///
/// Two keys are equal when they have the same algorithm and the same DER
/// `SubjectPublicKeyInfo`, wherever they were loaded from; the same RSA key
/// loaded once plainly and once as PSS is two different keys.
public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    let storage: Storage

    /// The scheme this key verifies with, decided at load time.
    public var algorithm: SignatureAlgorithm { storage.profile.algorithm }
    /// RSA modulus bits; 256 for P-256 and Ed25519.
    public var bits: Int { storage.profile.bits }
    /// The file path the key came from, or the label given to ``keys(from:source:options:)``.
    public var source: String { storage.source }
    /// Lowercase hex SHA-256 of ``derRepresentation``; the same value as
    /// `openssl pkey -pubin -in KEY -outform DER | sha256sum`, so people can
    /// compare a key here with a key elsewhere.
    public var sha256Fingerprint: String { storage.fingerprint }
    /// The first 8 bytes of that SHA-256, big-endian: the id a playback
    /// session records of the key that admitted it, read once at load.
    package var fingerprintPrefix: UInt64 { storage.fingerprintPrefix }
    /// The DER `SubjectPublicKeyInfo`, whatever format the key was loaded from.
    public var derRepresentation: [UInt8] { storage.der }
    /// The dates of the certificate the key was loaded from, or nil when it
    /// was not loaded from a certificate. Informational only: a certificate
    /// outside its dates still yields its key (docs/DESIGN.md#signatures-and-keys).
    public var certificateValidity: CertificateValidity? { storage.certificateValidity }

    /// "RSA-2048 SHA256withRSA key from keys/issuer.pem (SHA-256 3fa1…)".
    /// Made once, when the key is loaded: every valid verdict's reason names it.
    public var description: String { storage.description }

    /// Every key in `bytes`, in order.
    ///
    /// Formats are sniffed by content, never by file name: PEM (`PUBLIC KEY`,
    /// `RSA PUBLIC KEY`, `CERTIFICATE`; several blocks allowed, text around
    /// them ignored) or DER (SubjectPublicKeyInfo, X.509 certificate, or a
    /// PKCS#1 RSA public key). A certificate is only a container for its key:
    /// its dates and issuer are not checked (its dates are kept in
    /// ``certificateValidity``). Degenerate keys are refused whatever the
    /// options (docs/DESIGN.md#degenerate-keys; see `docs/SIGNATURES.md`).
    ///
    /// - Parameter bytes: the PEM or DER content, as read.
    /// - Parameter options: what else to accept (insecure sizes, RSA-PSS).
    /// - Parameter source: names the input in errors and on each key
    ///   (a file path, or e.g. `"inline"`).
    /// - Throws: ``KeyError`` naming `source`: `noKeysFound` for empty input,
    ///   `unsupportedFormat` for anything unreadable or a private key,
    ///   `unsupportedKeyType`, `degenerateKey`, or `insecureKeySize` (RSA under 2048 bits unless
    ///   ``KeyLoadingOptions/allowsInsecureKeySizes``).
    public static func keys(
        from bytes: [UInt8],
        source: String,
        options: KeyLoadingOptions = .init()
    ) throws(KeyError) -> [PublicKey] {
        var keys: [PublicKey] = []
        for decoded in try KeyDecoding.publicKeys(from: bytes, source: source) {
            keys.append(try PublicKey(decoded, source: source, options: options))
        }
        return keys
    }

    /// Wraps an already-decoded key: classify (refusing degenerate keys),
    /// encode, prepare the verifier.
    init(_ decoded: KeyDecoding.Decoded, source: String, options: KeyLoadingOptions) throws(KeyError) {
        let key = decoded.key
        let prefix = decoded.location.map { "\($0): " } ?? ""
        let profile = try KeyPolicy.profile(of: key, options: options, source: source, prefix: prefix)
        guard let der = key.subjectPublicKeyInfoDER(), let fingerprint = OpenSSLSHA256.shared.hexDigest(of: der) else {
            throw KeyError(.unsupportedFormat, source, "\(prefix)key cannot be re-encoded as SubjectPublicKeyInfo")
        }
        let verifier: SignatureVerifier
        do {
            verifier = try SignatureVerifier(key: key, algorithm: profile.algorithm)
        } catch {
            // An RSA-PSS key whose parameters pin another digest or MGF lands here.
            throw KeyError(
                .unsupportedKeyType,
                source,
                "\(prefix)\(profile.displayName) key cannot verify \(profile.algorithm.rawValue): \(error.reason)"
            )
        }
        storage = Storage(
            profile: profile,
            source: source,
            der: der,
            fingerprint: fingerprint,
            verifier: verifier,
            certificateValidity: decoded.certificateValidity
        )
    }

    /// True when `signature` is a valid signature by this key over exactly `message`.
    ///
    /// Never throws and never traps on hostile input: a signature of the
    /// wrong length for the key, empty, or garbage is simply `false`.
    /// ECDSA signatures may be DER or raw 64-byte `r‖s`.
    ///
    /// The signature is a `[UInt8]` because that is what Base64 decoding of
    /// `signatureInfo` yields; the message is a `Span` so the signed bytes can
    /// be checked where they lie in the token, without a copy
    /// (`token.signedBytes.span`). The `Span` overload takes any contiguous storage.
    public func isValidSignature(_ signature: [UInt8], for message: Span<UInt8>) -> Bool {
        isValidSignature(signature.span, for: message)
    }

    /// Convenience for a message held in an array.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        isValidSignature(signature.span, for: message.span)
    }

    /// The zero-copy form: signature and message in any contiguous storage.
    public func isValidSignature(_ signature: Span<UInt8>, for message: Span<UInt8>) -> Bool {
        var digest = SignedMessageDigest()
        return storage.verifier.isValid(signature, message: message, digest: &digest)
    }

    /// Verify with a digest shared across the keys of a ring.
    func isValidSignature(_ signature: Span<UInt8>, for message: Span<UInt8>, digest: inout SignedMessageDigest) -> Bool {
        storage.verifier.isValid(signature, message: message, digest: &digest)
    }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
        lhs.storage === rhs.storage || (lhs.algorithm == rhs.algorithm && lhs.storage.der == rhs.storage.der)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(storage.der)
    }

    /// Everything about one loaded key; shared by every copy of the struct.
    final class Storage: Sendable {
        let profile: KeyPolicy.Profile
        let source: String
        let der: [UInt8]
        let fingerprint: String
        let fingerprintPrefix: UInt64
        let verifier: SignatureVerifier
        let certificateValidity: CertificateValidity?
        let description: String

        init(
            profile: KeyPolicy.Profile,
            source: String,
            der: [UInt8],
            fingerprint: String,
            verifier: SignatureVerifier,
            certificateValidity: CertificateValidity?
        ) {
            self.profile = profile
            self.source = source
            self.der = der
            self.fingerprint = fingerprint
            fingerprintPrefix = SHA256Hasher.hash(der).bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            self.verifier = verifier
            self.certificateValidity = certificateValidity
            description = "\(profile.displayName) \(profile.algorithm.rawValue) key from \(source) (SHA-256 \(fingerprint))"
        }
    }
}
