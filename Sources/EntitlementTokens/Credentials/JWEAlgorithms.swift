/// The JWE algorithms an encrypted metadata value may use (docs/DESIGN.md#user-metadata; RFC 7518
/// §4.2–4.3 and §5). Anything else is refused by name.
public enum JWEKeyAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    case rsa1_5 = "RSA1_5"
    case rsaOAEP = "RSA-OAEP"
    case rsaOAEP256 = "RSA-OAEP-256"

    var padding: RSAOperations.Padding {
        switch self {
        case .rsa1_5: .pkcs1v15
        case .rsaOAEP: .oaepSHA1
        case .rsaOAEP256: .oaepSHA256
        }
    }
}

/// JWE content encryption (RFC 7518 §5).
public enum JWEContentEncryption: String, Sendable, Hashable, CaseIterable, Codable {
    case a128CBCHS256 = "A128CBC-HS256"
    case a256CBCHS512 = "A256CBC-HS512"
    case a128GCM = "A128GCM"
    case a256GCM = "A256GCM"

    /// The content key's length in bytes (for CBC-HS: MAC key ‖ AES key).
    var keyByteCount: Int {
        switch self {
        case .a128CBCHS256: 32
        case .a256CBCHS512: 64
        case .a128GCM: 16
        case .a256GCM: 32
        }
    }

    var ivByteCount: Int { isGCM ? 12 : 16 }
    var isGCM: Bool { self == .a128GCM || self == .a256GCM }
}

/// How a metadata value was (or is to be) encrypted: a JWE, or bare Base64 of
/// an RSA ciphertext with one of three paddings.
public enum MetadataEncryptionScheme: Sendable, Hashable, CustomStringConvertible {
    case jwe(JWEKeyAlgorithm, JWEContentEncryption)
    case rsaPKCS1v15
    case rsaOAEPSHA1
    case rsaOAEPSHA256

    /// "JWE RSA-OAEP-256 + A256GCM", "RSA PKCS#1 v1.5", "RSA-OAEP (SHA-1)", "RSA-OAEP (SHA-256)".
    public var description: String {
        switch self {
        case .jwe(let alg, let enc): "JWE \(alg.rawValue) + \(enc.rawValue)"
        case .rsaPKCS1v15: "RSA PKCS#1 v1.5"
        case .rsaOAEPSHA1: "RSA-OAEP (SHA-1)"
        case .rsaOAEPSHA256: "RSA-OAEP (SHA-256)"
        }
    }

    /// The bare RSA schemes in the order a value is tried: OAEP first, because
    /// its check is strong, while about one OAEP ciphertext in a few hundred
    /// would pass the PKCS#1 v1.5 padding check and yield garbage.
    static let bareTrialOrder: [MetadataEncryptionScheme] = [.rsaOAEPSHA256, .rsaOAEPSHA1, .rsaPKCS1v15]

    var barePadding: RSAOperations.Padding? {
        switch self {
        case .jwe: nil
        case .rsaPKCS1v15: .pkcs1v15
        case .rsaOAEPSHA1: .oaepSHA1
        case .rsaOAEPSHA256: .oaepSHA256
        }
    }
}
