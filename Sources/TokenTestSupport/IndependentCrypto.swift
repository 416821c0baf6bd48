import CTestCrypto

/// The harness's own signature check, straight over OpenSSL: it shares no code
/// with the library's Signature/ stage, so a VALID_TOKEN the library should
/// not have given is caught even if both "agree" through a shared bug.
///
/// The rule is the project's (docs/FORMAT.md, docs/DESIGN.md#signatures-and-keys): the key decides the
/// algorithm — RSA: PKCS#1 v1.5 SHA-256; RSA-PSS: PSS SHA-256; EC P-256: ECDSA
/// SHA-256, DER or raw r‖s; Ed25519: Ed25519 over the message.
public final class IndependentVerifier: @unchecked Sendable {
    /// Owned EVP_PKEY pointers, freed in deinit.
    private let keys: [(path: String, key: OpaquePointer)]

    public var count: Int { keys.count }

    /// Loads every PEM public key (`PUBLIC KEY` blocks) of every file in `directory`.
    public init(directory: String) {
        var loaded: [(String, OpaquePointer)] = []
        for path in files(in: directory) {
            guard let pem = readFile(path) else { setupFailure("cannot read key file \(path)") }
            let before = loaded.count
            pem.withUnsafeBytes { raw in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
                defer { BIO_free(bio) }
                while let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) {
                    loaded.append((path, key))
                }
            }
            ERR_clear_error()
            if loaded.count == before { setupFailure("no PEM public key in \(path)") }
        }
        keys = loaded
    }

    deinit {
        for (_, key) in keys { EVP_PKEY_free(key) }
    }

    /// The path of a key that verifies `signature` over `message`, or nil.
    public func verifyingKey(signature: [UInt8], message: [UInt8]) -> String? {
        for (path, key) in keys where verify(key, signature: signature, message: message) {
            return path
        }
        return nil
    }

    private func verify(_ key: OpaquePointer, signature: [UInt8], message: [UInt8]) -> Bool {
        let type = EVP_PKEY_get_base_id(key)
        if type == EVP_PKEY_EC {
            if digestVerify(key, digest: true, pss: false, signature: signature, message: message) { return true }
            if signature.count == 64, let der = Self.derFromRaw(signature) {
                return digestVerify(key, digest: true, pss: false, signature: der, message: message)
            }
            return false
        }
        if type == EVP_PKEY_ED25519 {
            return digestVerify(key, digest: false, pss: false, signature: signature, message: message)
        }
        if type == EVP_PKEY_RSA_PSS {
            return digestVerify(key, digest: true, pss: true, signature: signature, message: message)
        }
        if type == EVP_PKEY_RSA {
            return digestVerify(key, digest: true, pss: false, signature: signature, message: message)
        }
        return false
    }

    private func digestVerify(_ key: OpaquePointer, digest: Bool, pss: Bool, signature: [UInt8], message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        var keyContext: OpaquePointer? = nil
        guard EVP_DigestVerifyInit(context, &keyContext, digest ? EVP_sha256() : nil, nil, key) == 1 else { return false }
        if pss, let keyContext {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1 else { return false }
        }
        let status = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        return status == 1
    }

    /// A raw 64-byte r‖s as a DER ECDSA-Sig-Value, through OpenSSL's own encoder.
    static func derFromRaw(_ raw: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        return written == length ? der : nil
    }
}

/// A Base64 reader written for the harness: white space (space, tab, CR, LF)
/// skipped, either alphabet, padding optional. Nil for anything else.
func independentBase64(_ input: some Sequence<UInt8>) -> [UInt8]? {
    var symbols = Array(input.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) })
    while symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
    if symbols.contains(UInt8(ascii: "-")) || symbols.contains(UInt8(ascii: "_")) {
        if symbols.contains(UInt8(ascii: "+")) || symbols.contains(UInt8(ascii: "/")) { return nil }
    }
    guard symbols.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    var accumulator: UInt32 = 0
    var bits = 0
    for symbol in symbols {
        let value: UInt32
        switch symbol {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(symbol - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(symbol - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(symbol - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
        default: return nil
        }
        accumulator = accumulator << 6 | value
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        }
    }
    return out
}
