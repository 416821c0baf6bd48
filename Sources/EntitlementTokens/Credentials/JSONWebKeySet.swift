/// A JWKS file (RFC 7517 §5) as a source of trusted keys for software statements.
///
/// Each JWK is turned into a DER SubjectPublicKeyInfo and loaded through the
/// key ring's own rules (``JWSVerificationKey``), so a JWKS key is refused for
/// exactly the reasons a PEM key would be (degenerate, too small, wrong curve).
/// A JWK holding private members (`d`, `p`, `q`, …) or a symmetric key (`oct`)
/// is refused: a trust file must never carry a secret, and an `oct` key would
/// be an HMAC key, which statements never accept.
public struct JSONWebKeySet: Sendable {
    /// The keys, in file order.
    public let keys: [JWSVerificationKey]

    /// Private members of RFC 7518 §6.2.2 and §6.3.2, and `k` of an `oct` key.
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// True when `document` looks like a JWKS: an object whose `keys` is an array.
    public static func isKeySet(_ document: JSONValue) -> Bool {
        if case .array = document["keys"] { return true }
        return false
    }

    /// Reads a JWKS (or one bare JWK) from `bytes`, naming `source` in errors.
    public init(bytes: [UInt8], source: String, options: KeyLoadingOptions = .init()) throws(KeyError) {
        let document: JSONValue
        do {
            document = try JSONValue.readObject(bytes)
        } catch {
            throw KeyError(.unsupportedFormat, source, "not a JWKS: \(error.message)")
        }
        let entries: [JSONValue]
        if case .array(let list) = document["keys"] {
            entries = list
        } else if document["kty"] != nil {
            entries = [document]
        } else {
            throw KeyError(.unsupportedFormat, source, "not a JWKS: no \"keys\" array and no \"kty\"")
        }
        guard !entries.isEmpty else { throw KeyError(.noKeysFound, source, "the JWKS has no keys") }
        var keys: [JWSVerificationKey] = []
        for (index, entry) in entries.enumerated() {
            keys.append(try Self.key(entry, number: index + 1, source: source, options: options))
        }
        self.keys = keys
    }

    /// Reads the JWKS file at `path` (a regular file; never a FIFO or device).
    public init(path: String, options: KeyLoadingOptions = .init()) throws(KeyError) {
        try self.init(bytes: KeyFiles.read(path), source: path, options: options)
    }

    private static func key(_ jwk: JSONValue, number: Int, source: String, options: KeyLoadingOptions) throws(KeyError) -> JWSVerificationKey {
        guard let members = jwk.members else {
            throw KeyError(.unsupportedFormat, source, "key \(number) is not a JSON object")
        }
        let kid = jwk["kid"]?.stringValue
        let label = "key \(number)\(kid.map { " (kid \(TerminalText.quoted($0)))" } ?? "")"
        func fail(_ detail: String) -> KeyError { KeyError(.unsupportedFormat, source, "\(label): \(detail)") }

        if let secret = members.first(where: { privateMembers.contains($0.name) }) {
            throw fail("holds the private member '\(secret.name)'; a trust file carries public keys only")
        }
        if let use = jwk["use"], use.stringValue != "sig" {
            throw fail("\"use\" is not \"sig\": the key is not for signatures")
        }
        if case .array(let operations) = jwk["key_ops"], !operations.contains(.string("verify")) {
            throw fail("\"key_ops\" does not include \"verify\"")
        }
        var algorithm: JWSAlgorithm?
        if let name = jwk["alg"] {
            guard let text = name.stringValue else { throw fail("\"alg\" is not a string") }
            switch JWSAlgorithm.named(text) {
            case .success(let allowed): algorithm = allowed
            case .failure(let refusal): throw fail(refusal.message)
            }
        }
        var thumbprints: [String: String] = [:]
        for name in ["x5t", "x5t#S256"] {
            if let value = jwk[name]?.stringValue { thumbprints[name] = value }
        }
        func member(_ name: String) throws(KeyError) -> [UInt8] {
            guard let text = jwk[name]?.stringValue else { throw fail("no \"\(name)\" string") }
            guard let bytes = Base64URL.decode(Array(text.utf8)) else { throw fail("\"\(name)\" is not unpadded Base64url") }
            return bytes
        }
        let spki: [UInt8]
        switch jwk["kty"]?.stringValue {
        case "RSA":
            spki = SubjectPublicKeyInfoDER.rsa(modulus: try member("n"), exponent: try member("e"))
        case "EC":
            let curve = jwk["crv"]?.stringValue
            let width: Int
            switch curve {
            case "P-256": width = 32
            case "P-384": width = 48
            default:
                throw KeyError(
                    .unsupportedKeyType,
                    source,
                    "\(label): EC curve \(TerminalText.quoted(curve ?? "(none)")) is not supported; P-256 or P-384"
                )
            }
            let x = try member("x")
            let y = try member("y")
            guard x.count == width, y.count == width else { throw fail("\"x\" and \"y\" must be \(width) bytes each for \(curve!)") }
            spki = SubjectPublicKeyInfoDER.ec(curveIsP256: width == 32, x: x, y: y)
        case "OKP":
            guard jwk["crv"]?.stringValue == "Ed25519" else {
                throw KeyError(.unsupportedKeyType, source, "\(label): OKP curve is not Ed25519")
            }
            let x = try member("x")
            guard x.count == 32 else { throw fail("\"x\" must be 32 bytes for Ed25519") }
            spki = SubjectPublicKeyInfoDER.ed25519(x)
        case "oct":
            throw KeyError(.unsupportedKeyType, source, "\(label): a symmetric (oct) key is an HMAC secret; statements are never verified with HMAC")
        case let other:
            throw KeyError(.unsupportedKeyType, source, "\(label): kty \(TerminalText.quoted(other ?? "(none)")) is not supported; RSA, EC or OKP")
        }
        return try JWSVerificationKey(
            subjectPublicKeyInfo: spki,
            source: source,
            keyID: kid,
            algorithm: algorithm,
            thumbprints: thumbprints,
            options: options
        )
    }
}

/// DER SubjectPublicKeyInfo built from a JWK's numbers, so a JWKS key is read
/// by the same OpenSSL decoder and rules as a PEM key.
enum SubjectPublicKeyInfoDER {
    private static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    private static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    private static let prime256v1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    private static let secp384r1: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
    private static let ed25519OID: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]

    static func rsa(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        let key = element(0x30, integer(modulus) + integer(exponent))
        return element(0x30, element(0x30, rsaEncryption + [0x05, 0x00]) + bitString(key))
    }

    static func ec(curveIsP256: Bool, x: [UInt8], y: [UInt8]) -> [UInt8] {
        element(0x30, element(0x30, ecPublicKey + (curveIsP256 ? prime256v1 : secp384r1)) + bitString([0x04] + x + y))
    }

    static func ed25519(_ x: [UInt8]) -> [UInt8] {
        element(0x30, element(0x30, ed25519OID) + bitString(x))
    }

    private static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var digits = Array(magnitude.drop { $0 == 0 })
        if digits.isEmpty { digits = [0] }
        if digits[0] & 0x80 != 0 { digits.insert(0, at: 0) }
        return element(0x02, digits)
    }

    private static func bitString(_ bytes: [UInt8]) -> [UInt8] {
        element(0x03, [0x00] + bytes)
    }

    private static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [tag]
        let count = content.count
        if count < 0x80 {
            output.append(UInt8(count))
        } else {
            var lengthBytes: [UInt8] = []
            var rest = count
            while rest > 0 {
                lengthBytes.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            output.append(0x80 | UInt8(lengthBytes.count))
            output += lengthBytes
        }
        return output + content
    }
}
