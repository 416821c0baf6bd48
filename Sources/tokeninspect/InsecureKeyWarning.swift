import EntitlementTokens

/// The warning `tokeninspect` gives for every key it reads under
/// `--allow-insecure-keys` that is RSA under 2048 bits: an entitlement
/// token's key and a CloudFront key alike. Old deployments and published
/// test vectors use such keys, and reading them is what support needs; but a
/// key that small can be factored, so a signature it verifies proves little,
/// and the output must not look like any other `VALID_TOKEN`.
enum InsecureKeyWarning {
    /// Writes one warning per key read from `source` described as `description` (`RSA-1024`).
    static func write(_ keys: [(source: String, description: String)]) {
        guard !keys.isEmpty else { return }
        for key in keys {
            OutputStream.standardError.write(
                "tokeninspect: warning: \(TerminalText(escaping: key.source)) is \(TerminalText(escaping: key.description)), "
                    + "under \(KeyLoadingOptions.minimumRSABits) bits, read because of --allow-insecure-keys: such a key can be factored, "
                    + "so what it verifies proves little\n"
            )
        }
        OutputStream.standardError.flush()
    }
}
