/// Issues software statements for tests, samples and staging (docs/DESIGN.md#software-statements).
///
/// The key decides the algorithm, as for tokens: an RSA key signs RS256 (an
/// RSA-PSS key PS256), a P-256 key ES256 (the DER signature OpenSSL makes is
/// re-encoded as the raw `r‖s` JWS requires), an Ed25519 key EdDSA. The header
/// is `alg`, `typ: JWT` and the chosen `kid`, in that order; the claims are
/// written in the order given.
public enum SoftwareStatementMinter {
    /// The JWS `alg` a signing key produces.
    public static func algorithm(for key: SigningKey) -> JWSAlgorithm {
        switch key.algorithm {
        case .rsaPKCS1SHA256: .rs256
        case .rsaPSSSHA256: .ps256
        case .ecdsaP256SHA256: .es256
        case .ed25519: .edDSA
        }
    }

    /// The compact serialization of a statement with `claims`, signed by `key`.
    public static func mint(claims: [JSONMember], keyID: String? = nil, key: SigningKey) throws(KeyError) -> String {
        let algorithm = algorithm(for: key)
        var header = [JSONMember(name: "alg", value: .string(algorithm.rawValue)), JSONMember(name: "typ", value: .string("JWT"))]
        if let keyID { header.append(JSONMember(name: "kid", value: .string(keyID))) }
        let signingInput = Base64URL.encode(JSONValue.object(header).encoded) + "." + Base64URL.encode(JSONValue.object(claims).encoded)
        var signature = try key.signature(for: Array(signingInput.utf8))
        if algorithm == .es256 {
            guard let raw = ECDSASignatureEncoding.raw(fromDER: signature, width: 32) else {
                throw KeyError(.signingFailed, key.publicKey.source, "OpenSSL's ECDSA signature is not DER ECDSA-Sig-Value")
            }
            signature = raw
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
