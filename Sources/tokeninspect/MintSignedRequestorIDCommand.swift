import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// `mint signed-requestor-id`: the requestor ID signed with the programmer's
/// private key, as the SDK's `setRequestor:signedRequestorID:` takes it (docs/DESIGN.md#signed-requestor-ids).
struct MintSignedRequestorIDCommand {
    static let command = CommandSpec(
        name: "signed-requestor-id",
        abstract: "Sign a requestor ID with the programmer's RSA private key (PKCS#1 v1.5, SHA-256 or SHA-1); prints its Base64.",
        discussion: """
            The key is PEM, DER, encrypted PEM or PKCS#12; its password comes from --key-password-file, \
            else TOKENINSPECT_KEY_PASSWORD, else a prompt on a terminal, else is empty.
            """,
        options: [
            .option("key", "FILE", help: "The programmer's private key (PEM, DER, encrypted PEM, PKCS#12).", required: true, completion: .file),
            .option("key-password-file", "FILE", help: "A file whose first line is the key's password.", completion: .file),
            .option("requestor", "ID", help: "The requestor ID to sign.", required: true),
            .choice(
                "digest",
                "DIGEST",
                RequestorIDDigestArgument.self,
                help: "The signature's digest: sha256, or sha1 for old registrations.",
                default: .sha256
            ),
        ],
        run: { try MintSignedRequestorIDCommand($0).run() }
    )

    let key: String
    let keyPasswordFile: String?
    let requestor: String
    let digest: RequestorIDDigestArgument

    init(_ parsed: ParsedArguments) {
        key = parsed.required("key")
        keyPasswordFile = parsed.string("key-password-file")
        requestor = parsed.required("requestor")
        digest = parsed.choice("digest")
    }

    func run() throws {
        let privateKey = try MintSignedRequestorIDCommand.loadKey(key, passwordFile: keyPasswordFile)
        do {
            let id = try privateKey.signRequestorID(requestor, digest: digest.value)
            OutputStream.standardOutput.write("\(id.base64)\n")
            OutputStream.standardOutput.flush()
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(error.message)\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
    }

    /// The programmer's key with its password by the rule of docs/DESIGN.md#key-passwords; exits 2 naming the problem.
    static func loadKey(_ path: String, passwordFile: String?) throws -> ProgrammerPrivateKey {
        do {
            let prompt: (() -> String?)? = isatty(STDIN_FILENO) == 1 ? { MetadataCommand.promptWithoutEcho(for: path) } : nil
            let password = try KeyPassword.resolve(file: passwordFile, environment: MetadataCommand.environment(), prompt: prompt)
            return try ProgrammerPrivateKey(path: path, password: password)
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(error.message)\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
    }
}
