import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
enum TokenInspect {
    static let command = CommandSpec(
        name: "tokeninspect",
        abstract: "Decode, verify and mint TV Everywhere entitlement tokens.",
        discussion: """
            INPUT is a token (raw XML, Base64, Base64url, percent-encoded, or a REST JSON \
            response), @PATH for a file of many tokens, or - for stdin (the default when \
            stdin is not a terminal).


            """ + ExitStatus.table.helpText,
        subcommands: [
            InspectCommand.command, VerifyCommand.command, MintCommand.command, MetadataCommand.command, ManifestCommand.command, HARCommand.command,
        ]
    )

    static func main() {
        exit(CommandLineRunner.run(Array(CommandLine.arguments.dropFirst()), root: command, version: ProductVersion.version))
    }
}
