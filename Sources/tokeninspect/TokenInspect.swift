import ArgumentParser
import EntitlementTokens

@main
struct TokenInspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokeninspect",
        abstract: "Decode, verify and mint TV Everywhere entitlement tokens.",
        discussion: """
            INPUT is a token (raw XML, Base64, Base64url, percent-encoded, or a REST JSON \
            response), @PATH for a file of many tokens, or - for stdin (the default when \
            stdin is not a terminal).


            """ + ExitStatus.table.helpText,
        version: ProductVersion.version,
        subcommands: [InspectCommand.self, VerifyCommand.self, MintCommand.self, MetadataCommand.self]
    )
}
