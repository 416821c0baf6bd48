/// How keys are interpreted when they are loaded.
///
/// Both switches exist for the same reason: the key, not the token, decides
/// how a signature is checked, so anything that changes that decision has to
/// be said by the operator up front, once, at load time.
public struct KeyLoadingOptions: Sendable, Equatable {
    /// Accept RSA keys under 2048 bits.
    ///
    /// Off by default. Old deployments signed with RSA-1024 (128-byte
    /// signatures), which can no longer be trusted to resist forgery; turning
    /// this on (`--allow-insecure-keys` in the CLI) is a deliberate choice to
    /// read such tokens anyway, e.g. to debug a legacy issuer.
    public var allowsInsecureKeySizes: Bool = false

    /// Verify (and sign) with RSASSA-PSS for plain `rsaEncryption` RSA keys.
    ///
    /// A key encoded as an RSA-PSS key (`id-RSASSA-PSS`) is always PSS. A plain
    /// RSA key carries no such mark, so an issuer that signs PSS with an
    /// ordinary RSA key needs this switch: "a key configured as PSS" (docs/DESIGN.md#signatures-and-keys).
    public var treatsRSAKeysAsPSS: Bool = false

    /// Options; both default to the safe choice (off).
    public init(allowsInsecureKeySizes: Bool = false, treatsRSAKeysAsPSS: Bool = false) {
        self.allowsInsecureKeySizes = allowsInsecureKeySizes
        self.treatsRSAKeysAsPSS = treatsRSAKeysAsPSS
    }

    /// RSA keys under this size are refused unless ``allowsInsecureKeySizes``.
    public static let minimumRSABits = 2048
}
