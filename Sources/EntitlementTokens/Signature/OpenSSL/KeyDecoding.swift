internal import COpenSSL

/// Turns key-file bytes into OpenSSL keys, sniffing the format by content.
///
/// Accepted for trust (public) keys — docs/DESIGN.md#signatures-and-keys:
/// - PEM `PUBLIC KEY` (SubjectPublicKeyInfo), `RSA PUBLIC KEY` (PKCS#1),
///   `CERTIFICATE` / `X509 CERTIFICATE` (the key inside; the certificate's
///   dates, issuer and extensions are *not* checked: it is a key container,
///   trusted because the operator configured it); several blocks per file;
/// - DER SubjectPublicKeyInfo, X.509 certificate, or PKCS#1 `RSAPublicKey`.
///
/// Accepted for signing (private) keys: PEM `PRIVATE KEY` (PKCS#8),
/// `RSA PRIVATE KEY`, `EC PRIVATE KEY` (an `EC PARAMETERS` block beside it,
/// as `openssl ecparam -genkey` writes, is skipped), and DER PKCS#8 or
/// traditional. Encrypted keys are refused with a hint to decrypt them.
enum KeyDecoding {
    /// A decoded key and where in the input it came from.
    struct Decoded {
        var key: OpenSSLKey
        /// "block 2 (CERTIFICATE)" for PEM with several blocks, nil otherwise.
        var location: String?
        /// The dates of the certificate the key came from, when it came from one.
        var certificateValidity: CertificateValidity?
    }

    /// A part of a key-directory file that holds no trusted key, skipped
    /// with a notice instead of failing the load.
    struct Skipped {
        var code: KeyLoadNotice.Code
        /// Why, for people: "holds no key (…)", "block 2 (PRIVATE KEY) is a private key".
        var detail: String
    }

    /// The keys of one file, and what was skipped in it (only in a key directory).
    struct DecodedFile {
        var keys: [Decoded] = []
        var skipped: [Skipped] = []
    }

    static let privateLabels: Set<String> = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
    static let publicLabels: Set<String> = ["PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", "X509 CERTIFICATE"]
    /// Blocks that carry no key and are skipped wherever they appear.
    static let ignoredLabels: Set<String> = ["EC PARAMETERS"]

    static let privateKeyHint = "trust only public keys (extract one with `openssl pkey -in KEY -pubout`)"

    // MARK: Public keys

    /// Every key in a file given as a key: anything that is not a public key
    /// or certificate is an error, because the operator named this file.
    static func publicKeys(from input: [UInt8], source: String) throws(KeyError) -> [Decoded] {
        try decodePublicKeys(from: input, source: source, inDirectory: false).keys
    }

    /// Every key in a file found in a key directory (docs/DESIGN.md#signatures-and-keys): a file that
    /// holds no key (a README), a private key, or a PEM block of another kind
    /// is skipped and said in ``DecodedFile/skipped``. A block that claims
    /// to be a public key but does not decode is still an error: that is a
    /// key the operator meant to trust.
    static func publicKeysInDirectoryEntry(from input: [UInt8], source: String) throws(KeyError) -> DecodedFile {
        try decodePublicKeys(from: input, source: source, inDirectory: true)
    }

    private static func decodePublicKeys(from input: [UInt8], source: String, inDirectory: Bool) throws(KeyError) -> DecodedFile {
        let bytes = withoutByteOrderMark(input)
        if bytes.allSatisfy(\.isASCIIWhitespace) {
            let detail = bytes.isEmpty ? "file is empty" : "holds only whitespace"
            guard inDirectory else { throw KeyError(.noKeysFound, source, detail) }
            return DecodedFile(skipped: [Skipped(code: .holdsNoKey, detail: "holds no key (\(detail))")])
        }
        guard PEMBlocks.looksLikePEM(bytes) else {
            if let decoded = publicKey(fromDER: bytes) {
                return DecodedFile(keys: [decoded])
            }
            if isECKeyWithUndecodablePoint(bytes) { throw offCurve(source, "") }
            if isDERPrivateKey(bytes) {
                let detail = "DER private key; \(privateKeyHint)"
                guard inDirectory else { throw KeyError(.unsupportedFormat, source, detail) }
                return DecodedFile(skipped: [Skipped(code: .privateKeySkipped, detail: "is a private key, never trusted; \(privateKeyHint)")])
            }
            if PrivateKeyContainers.isPKCS12(bytes) {
                // A programmer's .p12/.pfx: never a token key; named as a key for the
                // credentials (docs/DESIGN.md#key-passwords) it is opened before this point (KeyFileWalk).
                let detail =
                    "a PKCS#12 file (.p12/.pfx) is a programmer's private key, never trusted for tokens; \(privateKeyHint); software statements, signed requestor IDs and metadata --decrypt-key read it"
                guard inDirectory else { throw KeyError(.unsupportedFormat, source, detail) }
                return DecodedFile(skipped: [Skipped(code: .privateKeySkipped, detail: "is \(detail)")])
            }
            let detail = "neither PEM (no \"-----BEGIN\" line) nor DER SubjectPublicKeyInfo, X.509 certificate or PKCS#1 RSA public key"
            guard inDirectory else { throw KeyError(.unsupportedFormat, source, detail) }
            return DecodedFile(skipped: [Skipped(code: .holdsNoKey, detail: "holds no key (\(detail))")])
        }
        let blocks = try PEMBlocks.blocks(in: bytes, source: source, allowsNone: inDirectory)
            .filter { !ignoredLabels.contains($0.label) }
        let several = blocks.count > 1
        var file = DecodedFile()
        for block in blocks {
            let location = several ? "block \(block.index) (\(block.label))" : nil
            let prefix = location.map { "\($0): " } ?? ""
            if privateLabels.contains(block.label) {
                guard inDirectory else {
                    throw KeyError(.unsupportedFormat, source, "\(prefix)PEM \"\(block.label)\" is a private key; \(privateKeyHint)")
                }
                file.skipped.append(
                    Skipped(
                        code: .privateKeySkipped,
                        detail: "\(location ?? "PEM \"\(block.label)\"") is a private key, never trusted; \(privateKeyHint)"
                    )
                )
                continue
            }
            guard publicLabels.contains(block.label) else {
                guard inDirectory else {
                    throw KeyError(
                        .unsupportedFormat,
                        source,
                        "\(prefix)PEM \"\(block.label)\" is not a public key; expected PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE"
                    )
                }
                file.skipped.append(
                    Skipped(
                        code: .holdsNoKey,
                        detail: "\(location ?? "PEM \"\(block.label)\"") holds no public key or certificate"
                    )
                )
                continue
            }
            let decoded: Decoded?
            switch block.label {
            case "PUBLIC KEY":
                decoded = decodeWhole(block.der) { d2i_PUBKEY(nil, &$0, $1) }.map { Decoded(key: OpenSSLKey(taking: $0)) }
            case "RSA PUBLIC KEY":
                decoded = decodeWhole(block.der) { d2i_PublicKey(EVP_PKEY_RSA, nil, &$0, $1) }.map { Decoded(key: OpenSSLKey(taking: $0)) }
            default:
                decoded = keyFromCertificate(block.der)
            }
            guard var decoded else {
                let reason = OpenSSLErrorQueue.drain()
                if isECKeyWithUndecodablePoint(block.der) { throw offCurve(source, prefix) }
                throw KeyError(.unsupportedFormat, source, "\(prefix)PEM \"\(block.label)\" does not decode: \(reason)")
            }
            decoded.location = location
            file.keys.append(decoded)
        }
        if file.keys.isEmpty {
            let detail = "holds no PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE block"
            guard inDirectory else { throw KeyError(.noKeysFound, source, detail) }
            if file.skipped.isEmpty { file.skipped.append(Skipped(code: .holdsNoKey, detail: "holds no key (\(detail))")) }
        }
        return file
    }

    /// The key of DER SubjectPublicKeyInfo, an X.509 certificate, or a PKCS#1
    /// RSA public key, or nil.
    private static func publicKey(fromDER der: [UInt8]) -> Decoded? {
        if let key = decodeWhole(der, { d2i_PUBKEY(nil, &$0, $1) }) {
            return Decoded(key: OpenSSLKey(taking: key))
        }
        if let decoded = keyFromCertificate(der) {
            return decoded
        }
        if let key = decodeWhole(der, { d2i_PublicKey(EVP_PKEY_RSA, nil, &$0, $1) }) {
            return Decoded(key: OpenSSLKey(taking: key))
        }
        OpenSSLErrorQueue.clear()
        return nil
    }

    /// True when `der` is a SubjectPublicKeyInfo for an EC key whose point
    /// OpenSSL refused to decode. OpenSSL checks that a point lies on the
    /// curve while decoding it, so an off-curve key never becomes a key
    /// object for ``DegenerateKeys`` to look at; this names the cause instead
    /// of a generic "does not decode".
    private static func isECKeyWithUndecodablePoint(_ der: [UInt8]) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        guard let info = decodeWhole(der, free: { X509_PUBKEY_free($0) }, { d2i_X509_PUBKEY(nil, &$0, $1) }) else {
            return false
        }
        defer { X509_PUBKEY_free(info) }
        var algorithm: OpaquePointer? = nil
        guard X509_PUBKEY_get0_param(&algorithm, nil, nil, nil, info) == 1, let algorithm else { return false }
        return OBJ_obj2nid(algorithm) == NID_X9_62_id_ecPublicKey
    }

    private static func offCurve(_ source: String, _ prefix: String) -> KeyError {
        KeyError(
            .degenerateKey,
            source,
            "\(prefix)EC key refused: its public point does not decode (off the curve or malformed); no option accepts such a key"
        )
    }

    private static func isDERPrivateKey(_ der: [UInt8]) -> Bool {
        guard let privateKey = decodeWhole(der, { d2i_AutoPrivateKey(nil, &$0, $1) }) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        EVP_PKEY_free(privateKey)
        return true
    }

    /// The public key of a DER certificate and the certificate's dates, or nil.
    private static func keyFromCertificate(_ der: [UInt8]) -> Decoded? {
        guard let certificate = decodeWhole(der, free: { X509_free($0) }, { d2i_X509(nil, &$0, $1) }) else { return nil }
        defer { X509_free(certificate) }
        guard let key = X509_get_pubkey(certificate) else { return nil }
        return Decoded(key: OpenSSLKey(taking: key), certificateValidity: validity(of: certificate))
    }

    /// A certificate's `notBefore` and `notAfter`, or nil when either is
    /// unreadable or outside years 0001…9999.
    private static func validity(of certificate: OpaquePointer) -> CertificateValidity? {
        guard let epoch = ASN1_TIME_set(nil, 0) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ASN1_TIME_free(epoch) }
        func timestamp(_ time: UnsafePointer<ASN1_TIME>?) -> TokenTimestamp? {
            var days: Int32 = 0
            var seconds: Int32 = 0
            guard let time, ASN1_TIME_diff(&days, &seconds, epoch, time) == 1 else { return nil }
            return TokenTimestamp(millisecondsSince1970: (Int64(days) * 86_400 + Int64(seconds)) * 1000)
        }
        guard let notBefore = timestamp(X509_get0_notBefore(certificate)),
            let notAfter = timestamp(X509_get0_notAfter(certificate))
        else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return CertificateValidity(notBefore: notBefore, notAfter: notAfter)
    }

    // MARK: Private keys

    static func privateKey(from input: [UInt8], source: String) throws(KeyError) -> OpenSSLKey {
        let bytes = withoutByteOrderMark(input)
        if bytes.allSatisfy(\.isASCIIWhitespace) {
            throw KeyError(.noKeysFound, source, bytes.isEmpty ? "file is empty" : "holds only whitespace")
        }
        guard PEMBlocks.looksLikePEM(bytes) else {
            if let key = decodeWhole(bytes, { d2i_AutoPrivateKey(nil, &$0, $1) }) {
                return OpenSSLKey(taking: key)
            }
            OpenSSLErrorQueue.clear()
            if publicKey(fromDER: bytes) != nil {
                throw KeyError(.notAPrivateKey, source, "holds a public key or certificate, not a private key")
            }
            throw KeyError(
                .unsupportedFormat,
                source,
                "neither PEM (no \"-----BEGIN\" line) nor a DER PKCS#8 or traditional private key"
            )
        }
        let blocks = try PEMBlocks.blocks(in: bytes, source: source).filter { !ignoredLabels.contains($0.label) }
        let privateBlocks = blocks.filter { privateLabels.contains($0.label) }
        if let unknown = blocks.first(where: { !privateLabels.contains($0.label) && !publicLabels.contains($0.label) }) {
            throw KeyError(
                .unsupportedFormat,
                source,
                "PEM \"\(unknown.label)\" (block \(unknown.index)) is not a key; expected PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY"
            )
        }
        guard let block = privateBlocks.first else {
            throw KeyError(
                .notAPrivateKey,
                source,
                "holds \(blocks.map { $0.label }.joined(separator: ", ")), not a private key"
            )
        }
        guard privateBlocks.count == 1 else {
            throw KeyError(
                .unsupportedFormat,
                source,
                "holds \(privateBlocks.count) private keys; a signing key file must hold exactly one"
            )
        }
        if block.label == "ENCRYPTED PRIVATE KEY" || block.hasEncryptionHeaders {
            throw KeyError(
                .unsupportedFormat,
                source,
                "private key is encrypted; decrypt it first (`openssl pkey -in KEY -out PLAIN`)"
            )
        }
        let decoded: OpaquePointer?
        switch block.label {
        case "RSA PRIVATE KEY": decoded = decodeWhole(block.der) { d2i_PrivateKey(EVP_PKEY_RSA, nil, &$0, $1) }
        case "EC PRIVATE KEY": decoded = decodeWhole(block.der) { d2i_PrivateKey(EVP_PKEY_EC, nil, &$0, $1) }
        default: decoded = decodeWhole(block.der) { d2i_AutoPrivateKey(nil, &$0, $1) }
        }
        guard let decoded else {
            throw KeyError(
                .unsupportedFormat,
                source,
                "PEM \"\(block.label)\" does not decode: \(OpenSSLErrorQueue.drain())"
            )
        }
        return OpenSSLKey(taking: decoded)
    }

    // MARK: Helpers

    /// Runs an OpenSSL `d2i_*` decoder over all of `der` and returns the
    /// object only when the decoder consumed every byte: trailing bytes after
    /// a valid structure mean the input is not what it claims to be.
    static func decodeWhole(
        _ der: [UInt8],
        free: (OpaquePointer) -> Void = { EVP_PKEY_free($0) },
        _ decode: (inout UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    ) -> OpaquePointer? {
        guard !der.isEmpty else { return nil }
        return der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let object = decode(&cursor, buffer.count) else { return nil }
            if cursor == base + buffer.count { return object }
            free(object)
            return nil
        }
    }

    /// Drops a leading UTF-8 byte order mark, which editors on Windows add
    /// and which would hide the first `-----BEGIN` line from the PEM reader.
    private static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        ByteRules.startsWithByteOrderMark(bytes) ? Array(bytes.dropFirst(ByteRules.byteOrderMarkCount)) : bytes
    }
}
