import EntitlementTokens

/// A public key pasted into the debugger (docs/DESIGN.md#a-pasted-key): a
/// support engineer checks a token against the issuer's key without
/// restarting the gate. The key is loaded by the library's key loading, so
/// The rules of docs/DESIGN.md#degenerate-keys hold (degenerate keys refused whatever the options, RSA
/// under 2048 bits refused: there is no opt-in here), into a ring made for
/// that one report and dropped with it — never the gate's ring, never
/// `/v1/*`, never the verdict cache or the replay store. What it verifies is
/// shown as signed by the pasted key and not trusted by this gate, never as
/// `VALID_TOKEN`: a forged token pasted with its own key must not look genuine.
///
/// The debugger takes no private key: a private key, a PKCS#12 bundle or a
/// JWK with private members is refused with what to paste instead, before
/// the library sees it (the library refuses them too, in its own words).
enum PastedKey {
    /// Far over any public key or certificate (a 16384-bit RSA certificate is under 8 KiB).
    static let maximumBytes = 64 * 1024
    /// A pasted chain of certificates yields a few keys; more is not a paste.
    static let maximumKeys = 8
    /// How the key is named in its description and errors.
    static let source = "the pasted key"

    struct Refused: Error, Sendable, Equatable {
        var reason: String
    }

    static let privateKeyAdvice =
        "the debugger takes public keys only and has no use for a private one; "
        + "paste the public key (`openssl pkey -in KEY -pubout`) or the certificate"

    /// The ring of the pasted keys; nil when nothing but white space was pasted.
    static func ring(from bytes: [UInt8]) throws(Refused) -> KeyRing? {
        guard bytes.count <= maximumBytes else {
            throw Refused(reason: "the pasted key is \(bytes.count) bytes; a public key or certificate is under \(maximumBytes)")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains(where: { !$0.isWhitespace && $0 != "\u{FEFF}" }) else { return nil }
        if let label = privatePEMLabel(in: text) {
            throw Refused(reason: "a private key (PEM \"\(label)\"): \(privateKeyAdvice)")
        }
        if let first = text.first(where: { !$0.isWhitespace && $0 != "\u{FEFF}" }), first == "{" || first == "[" {
            throw Refused(reason: jwkRefusal(text))
        }
        if isPKCS12(bytes) || base64Decoded(text).map(isPKCS12) == true {
            throw Refused(
                reason: "a PKCS#12 bundle (.p12/.pfx), which holds a private key: \(privateKeyAdvice) "
                    + "(`openssl pkcs12 -in FILE -nokeys` prints its certificate)"
            )
        }
        let keys: [PublicKey]
        do {
            keys = try PublicKey.keys(from: bytes, source: source)
        } catch {
            // The library names its source first ("the pasted key: …"); the answer says "pasted key: " already.
            let prefix = "\(source): "
            throw Refused(reason: error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message)
        }
        guard keys.count <= maximumKeys else {
            throw Refused(reason: "the paste holds \(keys.count) keys; at most \(maximumKeys) are read")
        }
        return KeyRing(keys)
    }

    /// The label of the first PEM block that holds a private key
    /// (PKCS#8, traditional, encrypted, OpenSSH's own), if any.
    static func privatePEMLabel(in text: String) -> String? {
        var rest = Substring(text)
        while let begin = rest.firstRange(of: "-----BEGIN ") {
            rest = rest[begin.upperBound...]
            guard let end = rest.firstRange(of: "-----") else { return nil }
            let label = String(rest[..<end.lowerBound])
            if label.uppercased().contains("PRIVATE") { return label.count <= 80 ? label : String(label.prefix(80)) + "…" }
            rest = rest[end.upperBound...]
        }
        return nil
    }

    /// A JWK or JWKS: private members (RFC 7518 §6.2.2, §6.3.2, §6.4.1) are
    /// named; a public JWK is refused too, with the form to paste instead.
    static func jwkRefusal(_ text: String) -> String {
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].filter { member in
            text.firstMatch(of: try! Regex("\"\(member)\"\\s*:")) != nil
        }
        if !privateMembers.isEmpty {
            return "a JWK with private members (\(privateMembers.map { "\"\($0)\"" }.joined(separator: ", "))): \(privateKeyAdvice)"
        }
        return "a JSON document, not a key: paste the public key as PEM (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE)"
    }

    /// True for DER that opens like a PKCS#12 PFX (RFC 7292 §4): a SEQUENCE,
    /// INTEGER 3, then a SEQUENCE whose OID is PKCS#7 data or signed data.
    static func isPKCS12(_ bytes: [UInt8]) -> Bool {
        guard bytes.count > 20, bytes[0] == 0x30 else { return false }
        var index = 1
        guard let afterLength = skipLength(bytes, at: index) else { return false }
        index = afterLength
        guard bytes.count > index + 4, bytes[index..<(index + 3)].elementsEqual([0x02, 0x01, 0x03]), bytes[index + 3] == 0x30 else {
            return false
        }
        guard let contentStart = skipLength(bytes, at: index + 4) else { return false }
        let pkcs7: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07]
        return bytes.count >= contentStart + pkcs7.count && bytes[contentStart..<(contentStart + pkcs7.count)].elementsEqual(pkcs7)
    }

    /// The index after a DER length that starts at `index`.
    private static func skipLength(_ bytes: [UInt8], at index: Int) -> Int? {
        guard index < bytes.count else { return nil }
        let first = bytes[index]
        if first < 0x80 { return index + 1 }
        let count = Int(first & 0x7F)
        guard (1...4).contains(count), index + count < bytes.count else { return nil }
        return index + 1 + count
    }

    /// The bytes of a paste that is standard Base64 alone (a `.p12` run through `base64`); nil otherwise.
    private static func base64Decoded(_ text: String) -> [UInt8]? {
        var urlAlphabet: [UInt8] = []
        for byte in text.utf8 where !byte.isASCIIWhitespaceOrBOMByte {
            switch byte {
            case UInt8(ascii: "+"): urlAlphabet.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): urlAlphabet.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: urlAlphabet.append(byte)
            }
        }
        guard urlAlphabet.count >= 28 else { return nil }
        return Base64URL.decode(urlAlphabet)
    }
}

extension UInt8 {
    /// Space, tab, CR, LF, and the bytes of a UTF-8 BOM (EF BB BF), which a paste may carry.
    fileprivate var isASCIIWhitespaceOrBOMByte: Bool {
        self == 32 || self == 9 || self == 10 || self == 13 || self == 0xEF || self == 0xBB || self == 0xBF
    }
}
