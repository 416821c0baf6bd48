import ArgumentParser
import EntitlementTokens

/// The private key every `mint` subcommand that signs with the key ring's
/// rules takes (a token, a software statement), loaded one way: a key the
/// library refuses is exit 2 with its message.
struct MintSigningKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The private key (PEM or DER PKCS#8).", valueName: "PRIVATE_PEM"), completion: .file())
    var key: String

    @Flag(help: "Accept RSA keys under 2048 bits.")
    var allowInsecureKeys = false

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
