/// The signature scheme a trusted key verifies with.
///
/// The token never chooses this: `signatureInfo` carries only signature bytes,
/// and letting attacker-controlled input pick the algorithm is the classic
/// downgrade (think JWT `alg: none`). The scheme is a property of the key, so
/// it is decided once, when the key is loaded (docs/DESIGN.md#signatures-and-keys).
///
/// The raw values are the names the vendor's documentation and Java tooling use,
/// so they can be shown to people who know that ecosystem.
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256: the vendor's "SHA256WithRSA", what
    /// deployed token issuers sign with.
    case rsaPKCS1SHA256 = "SHA256withRSA"
    /// RSASSA-PSS with SHA-256 and MGF1-SHA-256. Verification detects the salt
    /// length (any length verifies); signing uses a 32-byte salt.
    case rsaPSSSHA256 = "SHA256withRSA/PSS"
    /// ECDSA over P-256 with SHA-256. Signatures are DER `ECDSA-Sig-Value`, or
    /// the raw 64-byte `r‖s` that JOSE-style signers emit.
    case ecdsaP256SHA256 = "SHA256withECDSA"
    /// Pure Ed25519 (RFC 8032) over the message itself; no pre-hash.
    case ed25519 = "Ed25519"
}
