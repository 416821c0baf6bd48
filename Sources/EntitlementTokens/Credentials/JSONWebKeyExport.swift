/// A trusted public key written as a JWK (RFC 7517), so `mint` can hand out the
/// JWKS that verifies what it signed, and tests and samples can make JWKS files
/// from the PEM keys they already have.
extension JSONWebKeySet {
    /// The public JWK of `key` (RSA, EC P-256 or Ed25519), members in the order
    /// RFC 7638 sorts them for thumbprints, then `kid`, `alg` and `use`.
    public static func publicJWK(of key: PublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) -> JSONValue? {
        guard let spki = DERReader.elements(in: key.derRepresentation[...]).first, spki.tag == 0x30 else { return nil }
        let parts = DERReader.elements(in: spki.content)
        guard parts.count == 2, parts[1].tag == 0x03, parts[1].content.first == 0 else { return nil }
        let publicBits = parts[1].content.dropFirst()
        func text(_ bytes: some Collection<UInt8>) -> JSONValue { .string(Base64URL.encode(bytes)) }
        var members: [JSONMember]
        switch key.algorithm {
        case .rsaPKCS1SHA256, .rsaPSSSHA256:
            guard let sequence = DERReader.elements(in: publicBits).first else { return nil }
            let numbers = DERReader.elements(in: sequence.content)
            guard numbers.count == 2 else { return nil }
            members = [
                JSONMember(name: "e", value: text(numbers[1].content.drop { $0 == 0 })),
                JSONMember(name: "kty", value: .string("RSA")),
                JSONMember(name: "n", value: text(numbers[0].content.drop { $0 == 0 })),
            ]
        case .ecdsaP256SHA256:
            guard publicBits.count == 65, publicBits.first == 0x04 else { return nil }
            let point = Array(publicBits.dropFirst())
            members = [
                JSONMember(name: "crv", value: .string("P-256")), JSONMember(name: "kty", value: .string("EC")),
                JSONMember(name: "x", value: text(point[0..<32])), JSONMember(name: "y", value: text(point[32...])),
            ]
        case .ed25519:
            members = [
                JSONMember(name: "crv", value: .string("Ed25519")), JSONMember(name: "kty", value: .string("OKP")),
                JSONMember(name: "x", value: text(publicBits)),
            ]
        }
        if let keyID { members.append(JSONMember(name: "kid", value: .string(keyID))) }
        if let algorithm { members.append(JSONMember(name: "alg", value: .string(algorithm.rawValue))) }
        members.append(JSONMember(name: "use", value: .string("sig")))
        return .object(members)
    }

    /// `{"keys": [...]}` of the given JWKs.
    public static func document(of jwks: [JSONValue]) -> JSONValue {
        .object([JSONMember(name: "keys", value: .array(jwks))])
    }
}

/// Just enough DER to walk a SubjectPublicKeyInfo the library made itself
/// (OpenSSL's `i2d_PUBKEY`): tag, definite length, content.
enum DERReader {
    struct Element {
        var tag: UInt8
        var content: ArraySlice<UInt8>
    }

    /// The elements one after another in `bytes`; stops at the first malformed one.
    static func elements(in bytes: ArraySlice<UInt8>) -> [Element] {
        var elements: [Element] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            index += 1
            guard index < bytes.endIndex else { break }
            var length = Int(bytes[index])
            index += 1
            if length >= 0x80 {
                let count = length & 0x7F
                guard count >= 1, count <= 4, index + count <= bytes.endIndex else { break }
                length = 0
                for byte in bytes[index..<index + count] { length = length << 8 | Int(byte) }
                index += count
            }
            guard length <= bytes.endIndex - index else { break }
            elements.append(Element(tag: tag, content: bytes[index..<index + length]))
            index += length
        }
        return elements
    }
}
