internal import COpenSSL

/// Turns key-file bytes into OpenSSL keys, sniffing the format by content.
///
/// Accepted for trust (public) keys — SPEC §3:
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
    }

    static let privateLabels: Set<String> = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
    static let publicLabels: Set<String> = ["PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", "X509 CERTIFICATE"]
    /// Blocks that carry no key and are skipped wherever they appear.
    static let ignoredLabels: Set<String> = ["EC PARAMETERS"]

    // MARK: Public keys

    static func publicKeys(from input: [UInt8], source: String) throws(KeyError) -> [Decoded] {
        let bytes = withoutByteOrderMark(input)
        if bytes.allSatisfy(isASCIIWhitespace) {
            throw KeyError(.noKeysFound, source, bytes.isEmpty ? "file is empty" : "holds only whitespace")
        }
        guard PEMBlocks.looksLikePEM(bytes) else {
            return [Decoded(key: try publicKey(fromDER: bytes, source: source), location: nil)]
        }
        let blocks = try PEMBlocks.blocks(in: bytes, source: source).filter { !ignoredLabels.contains($0.label) }
        let several = blocks.count > 1
        var keys: [Decoded] = []
        for block in blocks {
            let location = several ? "block \(block.index) (\(block.label))" : nil
            let prefix = location.map { "\($0): " } ?? ""
            if privateLabels.contains(block.label) {
                throw KeyError(.unsupportedFormat, source,
                    "\(prefix)PEM \"\(block.label)\" is a private key; trust only public keys "
                    + "(extract one with `openssl pkey -in KEY -pubout`)")
            }
            guard publicLabels.contains(block.label) else {
                throw KeyError(.unsupportedFormat, source,
                    "\(prefix)PEM \"\(block.label)\" is not a public key; expected PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE")
            }
            let decoded: OpaquePointer?
            switch block.label {
            case "PUBLIC KEY": decoded = decodeWhole(block.der) { d2i_PUBKEY(nil, &$0, $1) }
            case "RSA PUBLIC KEY": decoded = decodeWhole(block.der) { d2i_PublicKey(EVP_PKEY_RSA, nil, &$0, $1) }
            default: decoded = keyFromCertificate(block.der)
            }
            guard let decoded else {
                throw KeyError(.unsupportedFormat, source,
                    "\(prefix)PEM \"\(block.label)\" does not decode: \(OpenSSLErrorQueue.drain())")
            }
            keys.append(Decoded(key: OpenSSLKey(taking: decoded), location: location))
        }
        guard !keys.isEmpty else {
            throw KeyError(.noKeysFound, source, "holds no PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE block")
        }
        return keys
    }

    private static func publicKey(fromDER der: [UInt8], source: String) throws(KeyError) -> OpenSSLKey {
        if let key = decodeWhole(der, { d2i_PUBKEY(nil, &$0, $1) })
            ?? keyFromCertificate(der)
            ?? decodeWhole(der, { d2i_PublicKey(EVP_PKEY_RSA, nil, &$0, $1) }) {
            return OpenSSLKey(taking: key)
        }
        if let privateKey = decodeWhole(der, { d2i_AutoPrivateKey(nil, &$0, $1) }) {
            EVP_PKEY_free(privateKey)
            throw KeyError(.unsupportedFormat, source,
                "DER private key; trust only public keys (extract one with `openssl pkey -in KEY -pubout`)")
        }
        OpenSSLErrorQueue.clear()
        throw KeyError(.unsupportedFormat, source,
            "neither PEM (no \"-----BEGIN\" line) nor DER SubjectPublicKeyInfo, X.509 certificate or PKCS#1 RSA public key")
    }

    /// The public key of a DER certificate, or nil.
    private static func keyFromCertificate(_ der: [UInt8]) -> OpaquePointer? {
        guard let certificate = decodeWhole(der, free: { X509_free($0) }, { d2i_X509(nil, &$0, $1) }) else { return nil }
        defer { X509_free(certificate) }
        return X509_get_pubkey(certificate)
    }

    // MARK: Private keys

    static func privateKey(from input: [UInt8], source: String) throws(KeyError) -> OpenSSLKey {
        let bytes = withoutByteOrderMark(input)
        if bytes.allSatisfy(isASCIIWhitespace) {
            throw KeyError(.noKeysFound, source, bytes.isEmpty ? "file is empty" : "holds only whitespace")
        }
        guard PEMBlocks.looksLikePEM(bytes) else {
            if let key = decodeWhole(bytes, { d2i_AutoPrivateKey(nil, &$0, $1) }) {
                return OpenSSLKey(taking: key)
            }
            OpenSSLErrorQueue.clear()
            if (try? publicKey(fromDER: bytes, source: source)) != nil {
                throw KeyError(.notAPrivateKey, source, "holds a public key or certificate, not a private key")
            }
            throw KeyError(.unsupportedFormat, source,
                "neither PEM (no \"-----BEGIN\" line) nor a DER PKCS#8 or traditional private key")
        }
        let blocks = try PEMBlocks.blocks(in: bytes, source: source).filter { !ignoredLabels.contains($0.label) }
        let privateBlocks = blocks.filter { privateLabels.contains($0.label) }
        if let unknown = blocks.first(where: { !privateLabels.contains($0.label) && !publicLabels.contains($0.label) }) {
            throw KeyError(.unsupportedFormat, source,
                "PEM \"\(unknown.label)\" (block \(unknown.index)) is not a key; expected PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY")
        }
        guard let block = privateBlocks.first else {
            throw KeyError(.notAPrivateKey, source,
                "holds \(blocks.map { $0.label }.joined(separator: ", ")), not a private key")
        }
        guard privateBlocks.count == 1 else {
            throw KeyError(.unsupportedFormat, source,
                "holds \(privateBlocks.count) private keys; a signing key file must hold exactly one")
        }
        if block.label == "ENCRYPTED PRIVATE KEY" || block.hasEncryptionHeaders {
            throw KeyError(.unsupportedFormat, source,
                "private key is encrypted; decrypt it first (`openssl pkey -in KEY -out PLAIN`)")
        }
        let decoded: OpaquePointer?
        switch block.label {
        case "RSA PRIVATE KEY": decoded = decodeWhole(block.der) { d2i_PrivateKey(EVP_PKEY_RSA, nil, &$0, $1) }
        case "EC PRIVATE KEY": decoded = decodeWhole(block.der) { d2i_PrivateKey(EVP_PKEY_EC, nil, &$0, $1) }
        default: decoded = decodeWhole(block.der) { d2i_AutoPrivateKey(nil, &$0, $1) }
        }
        guard let decoded else {
            throw KeyError(.unsupportedFormat, source,
                "PEM \"\(block.label)\" does not decode: \(OpenSSLErrorQueue.drain())")
        }
        return OpenSSLKey(taking: decoded)
    }

    // MARK: Helpers

    /// Runs an OpenSSL `d2i_*` decoder over all of `der` and returns the
    /// object only when the decoder consumed every byte: trailing bytes after
    /// a valid structure mean the input is not what it claims to be.
    private static func decodeWhole(
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
        bytes.starts(with: [0xef, 0xbb, 0xbf]) ? Array(bytes.dropFirst(3)) : bytes
    }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d
    }
}
