/// The programmer's RSA private key (docs/DESIGN.md#key-passwords): it signs the requestor ID
/// and decrypts the user metadata values an MVPD encrypted to its public half.
///
/// Read from PEM or DER (as ``SigningKey`` reads them), from encrypted PEM
/// (`openssl genrsa -des3`, PKCS#8 `ENCRYPTED PRIVATE KEY`) or from PKCS#12
/// (`.p12`/`.pfx`), sniffed by content. Degenerate RSA keys are refused as on
/// the verifying side (docs/DESIGN.md#signatures-and-keys).
public struct ProgrammerPrivateKey: Sendable {
    let key: OpenSSLKey
    /// The public half, as a verifier loads it (what `--key` takes for a signed requestor ID).
    public let publicKey: PublicKey
    /// The file the key came from.
    public let source: String
    /// How the key was stored: "PEM", "encrypted PEM", "PKCS#12", "DER".
    public let container: String

    /// Reads the key in `bytes`; `password` opens an encrypted PEM or PKCS#12 file
    /// (and is not used otherwise).
    ///
    /// - Throws: ``KeyError``: `unsupportedFormat` (unreadable, wrong password,
    ///   a legacy PKCS#12 cipher OpenSSL cannot load), `notAPrivateKey`,
    ///   `unsupportedKeyType` (not RSA), `degenerateKey`.
    public init(bytes: [UInt8], source: String, password: KeyPassword = .empty) throws(KeyError) {
        let key: OpenSSLKey
        if PEMBlocks.looksLikePEM(bytes) {
            let encrypted = try PEMBlocks.blocks(in: bytes, source: source)
                .contains { $0.label == "ENCRYPTED PRIVATE KEY" || $0.hasEncryptionHeaders }
            if encrypted {
                key = try PrivateKeyContainers.encryptedPEMKey(bytes, password: password, source: source)
                container = "encrypted PEM"
            } else {
                key = try KeyDecoding.privateKey(from: bytes, source: source)
                container = "PEM"
            }
        } else if PrivateKeyContainers.isPKCS12(bytes) {
            key = try PrivateKeyContainers.pkcs12Key(bytes, password: password, source: source).key
            container = "PKCS#12"
        } else {
            key = try KeyDecoding.privateKey(from: bytes, source: source)
            container = "DER"
        }
        guard key.isA("RSA") else {
            throw KeyError(
                .unsupportedKeyType,
                source,
                "a \(key.typeName) key; signed requestor IDs and encrypted metadata use RSA"
            )
        }
        if let defect = DegenerateKeys.rsaDefect(of: key) {
            throw KeyError(.degenerateKey, source, "RSA key refused: \(defect)")
        }
        guard let der = key.subjectPublicKeyInfoDER(),
            let publicKey = try PublicKey.keys(
                from: der,
                source: source,
                options: KeyLoadingOptions(allowsInsecureKeySizes: true)
            ).first
        else {
            throw KeyError(.unsupportedFormat, source, "cannot derive the public key")
        }
        self.key = key
        self.publicKey = publicKey
        self.source = source
    }

    /// Reads the key file at `path`.
    public init(path: String, password: KeyPassword = .empty) throws(KeyError) {
        try self.init(bytes: KeyFiles.read(path), source: path, password: password)
    }

    /// RSA modulus bits.
    public var bits: Int { key.bits }

    /// "RSA-2048 key from keys/programmer.p12 (PKCS#12, SHA-256 3fa1…)".
    public var description: String {
        "RSA-\(key.bits) key from \(source) (\(container), SHA-256 \(publicKey.sha256Fingerprint))"
    }
}
