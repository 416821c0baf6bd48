import EntitlementTokens

/// The private key every `mint` subcommand that signs with the key ring's
/// rules takes (a token, a software statement), loaded one way: a key the
/// library refuses is exit 2 with its message.
struct MintSigningKeyOptions {
    static let options: [OptionSpec] = [
        .option("key", "PRIVATE_PEM", help: "The private key (PEM or DER PKCS#8).", required: true, completion: .file),
        .flag("allow-insecure-keys", help: "Accept RSA keys under 2048 bits."),
    ]

    let key: String
    let allowInsecureKeys: Bool

    init(_ parsed: ParsedArguments) {
        key = parsed.required("key")
        allowInsecureKeys = parsed.flag("allow-insecure-keys")
    }

    func load() throws -> SigningKey {
        do {
            return try SigningKey(path: key, options: KeyLoadingOptions(allowsInsecureKeySizes: allowInsecureKeys))
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(error.message)\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
    }
}
