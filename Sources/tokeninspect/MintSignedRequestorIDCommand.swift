import ArgumentParser
import EntitlementTokens
#if canImport(Glibc)
import Glibc
#endif

/// `mint signed-requestor-id`: the requestor ID signed with the programmer's
/// private key, as the SDK's `setRequestor:signedRequestorID:` takes it (docs/DESIGN.md#signed-requestor-ids).
struct MintSignedRequestorIDCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signed-requestor-id",
        abstract: "Sign a requestor ID with the programmer's RSA private key (PKCS#1 v1.5, SHA-256 or SHA-1); prints its Base64.",
        discussion: """
            The key is PEM, DER, encrypted PEM or PKCS#12; its password comes from --key-password-file, \
            else TOKENINSPECT_KEY_PASSWORD, else a prompt on a terminal, else is empty.
            """
    )

    @Option(help: ArgumentHelp("The programmer's private key (PEM, DER, encrypted PEM, PKCS#12).", valueName: "FILE"), completion: .file())
    var key: String

    @Option(help: ArgumentHelp("A file whose first line is the key's password.", valueName: "FILE"), completion: .file())
    var keyPasswordFile: String?

    @Option(help: ArgumentHelp("The requestor ID to sign.", valueName: "ID"))
    var requestor: String

    @Option(help: ArgumentHelp("The signature's digest: sha256, or sha1 for old registrations.", valueName: "DIGEST"))
    var digest: RequestorIDDigestArgument = .sha256

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
