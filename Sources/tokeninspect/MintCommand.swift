/// `mint`: issue signed tokens and credentials for tests, samples and staging.
/// A group whose default is `mint token`, so the token form needs no subcommand name.
enum MintCommand {
    static let command = CommandSpec(
        name: "mint",
        abstract: "Issue a signed token or credential (for tests, samples and staging servers).",
        usage: """
            tokeninspect mint [token] --key <PRIVATE_PEM> --requestor <ID> --resource <ID> [<options>]
            tokeninspect mint [token] --kind authentication --key <PRIVATE_PEM> --requestor <ID> [<options>]
            tokeninspect mint software-statement --key <PRIVATE_PEM> [--kid <KID>] [--claim <NAME=VALUE> ...] [<options>]
            tokeninspect mint signed-requestor-id --key <PRIVATE_KEY> --requestor <ID> [--digest sha1]
            tokeninspect mint metadata [--encrypt-to <PUBLIC_PEM>] --data <NAME=VALUE> ... [--encrypt <NAME> ...]
            tokeninspect mint cdn --profile <FILE> --resource <ID> [--now <TIME>] [--client-ip <IP>]
            """,
        discussion: "Without a subcommand, mint issues a token (mint token).",
        subcommands: [
            MintTokenCommand.command, MintSoftwareStatementCommand.command, MintSignedRequestorIDCommand.command,
            MintMetadataCommand.command, MintCDNCommand.command,
        ],
        defaultSubcommand: "token"
    )
}
