internal import COpenSSL

/// Opens the password-protected forms a programmer keeps the private key in
/// (docs/DESIGN.md#key-passwords): encrypted PEM (`openssl genrsa -des3`, or PKCS#8 `ENCRYPTED
/// PRIVATE KEY`) and PKCS#12 (`.p12`/`.pfx`).
///
/// The password is always handed to OpenSSL as data, never through its
/// default callback: with no password OpenSSL would prompt on the terminal by
/// itself, behind the caller's back.
enum PrivateKeyContainers {
    /// The key in PEM `bytes` whose only private block is encrypted.
    static func encryptedPEMKey(_ bytes: [UInt8], password: KeyPassword, source: String) throws(KeyError) -> OpenSSLKey {
        OpenSSLErrorQueue.clear()
        var passphrase = password.bytes.map { CChar(bitPattern: $0) } + [0]
        defer { wipe(&passphrase) }
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(clamping: buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return passphrase.withUnsafeMutableBufferPointer { phrase in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(phrase.baseAddress))
            }
        }
        guard let key else {
            let reason = OpenSSLErrorQueue.drain()
            let hint =
                reason.contains("bad decrypt") || reason.contains("bad password")
                ? "wrong password (\(reason))" : reason
            throw KeyError(.unsupportedFormat, source, "encrypted private key does not open: \(hint)")
        }
        return OpenSSLKey(taking: key)
    }

    /// True when `bytes` is DER of a PKCS#12 structure (by content, not name).
    static func isPKCS12(_ bytes: [UInt8]) -> Bool {
        guard let p12 = decodePKCS12(bytes) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        PKCS12_free(p12)
        return true
    }

    /// The private key (and the certificate beside it, if any) of a PKCS#12 file.
    ///
    /// Files written by old tools protect their certificates with RC2-40, which
    /// OpenSSL 3 keeps in its `legacy` provider: when the default provider
    /// cannot read the file, the legacy one is loaded and the file read again;
    /// if it cannot be loaded the file is refused naming the cipher.
    static func pkcs12Key(_ bytes: [UInt8], password: KeyPassword, source: String) throws(KeyError) -> (key: OpenSSLKey, certificateKey: OpenSSLKey?)
    {
        OpenSSLErrorQueue.clear()
        guard let p12 = decodePKCS12(bytes) else {
            throw KeyError(.unsupportedFormat, source, "not a PKCS#12 file: \(OpenSSLErrorQueue.drain())")
        }
        defer { PKCS12_free(p12) }
        var passphrase = password.bytes.map { CChar(bitPattern: $0) } + [0]
        defer { wipe(&passphrase) }
        let macChecks = passphrase.withUnsafeBufferPointer { PKCS12_verify_mac(p12, $0.baseAddress, Int32(password.bytes.count)) == 1 }
        if !macChecks {
            let reason = OpenSSLErrorQueue.drain()
            if reason.contains("unsupported") || reason.contains("fetch") {
                throw KeyError(.unsupportedFormat, source, "PKCS#12 integrity check uses an algorithm OpenSSL cannot run: \(reason)")
            }
            throw KeyError(.unsupportedFormat, source, "PKCS#12 password is wrong (its integrity check fails)")
        }
        var parsed = parse(p12, passphrase)
        if parsed == nil {
            let reason = OpenSSLErrorQueue.drain()
            guard reason.contains("unsupported") || reason.contains("fetch") else {
                throw KeyError(.unsupportedFormat, source, "PKCS#12 does not open: \(reason)")
            }
            guard LegacyProvider.load() else {
                throw KeyError(
                    .unsupportedFormat,
                    source,
                    "PKCS#12 is protected with a legacy cipher (\(reason)), and OpenSSL's legacy provider cannot be loaded; re-export it: `openssl pkcs12 -legacy -in OLD -nodes | openssl pkcs12 -export -out NEW`"
                )
            }
            parsed = parse(p12, passphrase)
            guard parsed != nil else {
                throw KeyError(.unsupportedFormat, source, "PKCS#12 does not open even with OpenSSL's legacy provider: \(OpenSSLErrorQueue.drain())")
            }
        }
        guard let (key, certificate) = parsed, let key else {
            if let certificate = parsed?.1 { X509_free(certificate) }
            throw KeyError(.notAPrivateKey, source, "PKCS#12 holds no private key")
        }
        var certificateKey: OpenSSLKey?
        if let certificate {
            if let publicKey = X509_get_pubkey(certificate) { certificateKey = OpenSSLKey(taking: publicKey) }
            X509_free(certificate)
        }
        OpenSSLErrorQueue.clear()
        return (OpenSSLKey(taking: key), certificateKey)
    }

    private static func decodePKCS12(_ bytes: [UInt8]) -> OpaquePointer? {
        guard !bytes.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let p12 = d2i_PKCS12(nil, &cursor, buffer.count) else { return nil }
            // Trailing bytes mean the file is not what it claims to be.
            guard let cursor, cursor == buffer.baseAddress! + buffer.count else {
                PKCS12_free(p12)
                return nil
            }
            return p12
        }
    }

    private static func parse(_ p12: OpaquePointer, _ passphrase: [CChar]) -> (OpaquePointer?, OpaquePointer?)? {
        var key: OpaquePointer? = nil
        var certificate: OpaquePointer? = nil
        let ok = passphrase.withUnsafeBufferPointer { PKCS12_parse(p12, $0.baseAddress, &key, &certificate, nil) }
        return ok == 1 ? (key, certificate) : nil
    }

    private static func wipe(_ buffer: inout [CChar]) {
        for index in buffer.indices { buffer[index] = 0 }
    }
}

/// OpenSSL's `legacy` provider (RC2, RC4, DES…), loaded once and only when a
/// file needs it, together with `default` so nothing else is lost.
enum LegacyProvider {
    private static let loaded: Bool = {
        guard OSSL_PROVIDER_load(nil, "legacy") != nil, OSSL_PROVIDER_load(nil, "default") != nil else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return true
    }()

    static func load() -> Bool { loaded }
}
