/// The JWS `alg` values a software statement may name (docs/DESIGN.md#software-statements), and what
/// each one means: digest, padding, and which keys can carry it.
///
/// An allow-list, not a parser of whatever the header says: `none` and the
/// HMAC family (`HS256`…) are refused by name, because accepting them is how
/// JWT verifiers were broken (`alg: none` verifies everything; `HS256` keyed
/// with the RSA *public* key lets anyone sign). Every other name is refused
/// as unknown.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    case rs256 = "RS256"
    case rs384 = "RS384"
    case rs512 = "RS512"
    case ps256 = "PS256"
    case ps384 = "PS384"
    case ps512 = "PS512"
    case es256 = "ES256"
    case es384 = "ES384"
    case edDSA = "EdDSA"

    /// The digest the signature covers; nil for EdDSA (Ed25519 hashes internally).
    var digestName: String? {
        switch self {
        case .rs256, .ps256, .es256: "SHA256"
        case .rs384, .ps384, .es384: "SHA384"
        case .rs512, .ps512: "SHA512"
        case .edDSA: nil
        }
    }

    /// Digest length in bytes (the PSS salt length RFC 7518 §3.5 fixes).
    var digestByteCount: Int {
        switch self {
        case .rs256, .ps256, .es256: 32
        case .rs384, .ps384, .es384: 48
        case .rs512, .ps512: 64
        case .edDSA: 0
        }
    }

    /// The kind of key the algorithm needs.
    var keyFamily: JWSKeyFamily {
        switch self {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: .rsa
        case .es256: .ecP256
        case .es384: .ecP384
        case .edDSA: .ed25519
        }
    }

    var isPSS: Bool { self == .ps256 || self == .ps384 || self == .ps512 }

    /// Reads a header's `alg`, or says why it is refused.
    static func named(_ name: String) -> Result<JWSAlgorithm, JWSAlgorithmRefusal> {
        if let algorithm = JWSAlgorithm(rawValue: name) { return .success(algorithm) }
        if name.lowercased() == "none" { return .failure(.none) }
        if name.hasPrefix("HS") { return .failure(.hmac(name)) }
        return .failure(.unknown(name))
    }
}

/// Why a header's `alg` is not accepted.
enum JWSAlgorithmRefusal: Error, Equatable {
    case none
    case hmac(String)
    case unknown(String)

    var message: String {
        let allowed = JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
        switch self {
        case .none:
            return "alg 'none' is refused: an unsigned statement proves nothing"
        case .hmac(let name):
            return "alg '\(name)' (HMAC) is refused: a shared-secret MAC keyed with a public key can be forged by anyone; allowed: \(allowed)"
        case .unknown(let name):
            return "alg '\(name)' is not allowed; allowed: \(allowed)"
        }
    }
}

/// The key types the JWS algorithms need.
enum JWSKeyFamily: String, Sendable {
    case rsa = "RSA"
    case ecP256 = "EC P-256"
    case ecP384 = "EC P-384"
    case ed25519 = "Ed25519"
}
