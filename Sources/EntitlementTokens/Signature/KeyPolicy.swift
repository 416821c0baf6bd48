/// Decides, once per key, which ``SignatureAlgorithm`` it verifies with, and
/// refuses keys that docs/DESIGN.md#signatures-and-keys does not allow.
///
/// This is the only place that maps key types to algorithms, so "the key
/// decides" is one readable table rather than a rule scattered over callers.
enum KeyPolicy {
    /// What a loaded key is.
    struct Profile: Equatable {
        var algorithm: SignatureAlgorithm
        var bits: Int
        /// For people: "RSA-2048", "RSA-PSS-3072", "EC P-256", "Ed25519".
        var displayName: String
    }

    /// Curve names OpenSSL may report for P-256.
    static let p256Names: Set<String> = ["prime256v1", "P-256", "secp256r1"]

    /// - Throws: `unsupportedKeyType` for any type or curve outside the table,
    ///   `degenerateKey` for a key ``DegenerateKeys`` refuses (whatever the
    ///   options, and before the size rule: no opt-in makes such a key usable),
    ///   `insecureKeySize` for RSA under 2048 bits without the opt-in.
    ///   `prefix` (e.g. "block 2 (CERTIFICATE): ") locates the key in its file.
    static func profile(
        of key: OpenSSLKey,
        options: KeyLoadingOptions,
        source: String,
        prefix: String = ""
    ) throws(KeyError) -> Profile {
        if key.isA("RSA-PSS") || key.isA("RSA") {
            let isPSSKey = key.isA("RSA-PSS")
            let bits = key.bits
            let name = "\(isPSSKey ? "RSA-PSS" : "RSA")-\(bits)"
            if let defect = DegenerateKeys.rsaDefect(of: key) {
                throw degenerate(name, defect, source, prefix)
            }
            if bits < KeyLoadingOptions.minimumRSABits && !options.allowsInsecureKeySizes {
                throw KeyError(
                    .insecureKeySize,
                    source,
                    "\(prefix)\(name) key refused: under \(KeyLoadingOptions.minimumRSABits) bits; "
                        + "pass allowsInsecureKeySizes / --allow-insecure-keys to accept it"
                )
            }
            let pss = isPSSKey || options.treatsRSAKeysAsPSS
            return Profile(algorithm: pss ? .rsaPSSSHA256 : .rsaPKCS1SHA256, bits: bits, displayName: name)
        }
        if key.isA("EC") {
            guard let group = key.groupName else {
                throw KeyError(
                    .unsupportedKeyType,
                    source,
                    "\(prefix)EC key with explicit curve parameters is not supported; only named P-256 (prime256v1)"
                )
            }
            guard p256Names.contains(group) else {
                throw KeyError(
                    .unsupportedKeyType,
                    source,
                    "\(prefix)EC key on curve \(group) is not supported; only P-256 (prime256v1)"
                )
            }
            if let defect = DegenerateKeys.ecDefect(of: key) {
                throw degenerate("EC P-256", defect, source, prefix)
            }
            return Profile(algorithm: .ecdsaP256SHA256, bits: 256, displayName: "EC P-256")
        }
        if key.isA("ED25519") {
            if let defect = DegenerateKeys.ed25519Defect(of: key) {
                throw degenerate("Ed25519", defect, source, prefix)
            }
            return Profile(algorithm: .ed25519, bits: 256, displayName: "Ed25519")
        }
        throw KeyError(
            .unsupportedKeyType,
            source,
            "\(prefix)\(key.typeName) key is not supported; use RSA (2048 bits or more), RSA-PSS, EC P-256 or Ed25519"
        )
    }

    private static func degenerate(_ name: String, _ defect: String, _ source: String, _ prefix: String) -> KeyError {
        KeyError(.degenerateKey, source, "\(prefix)\(name) key refused: \(defect); no option accepts such a key")
    }
}
