import ArgumentParser
import EntitlementTokens

/// `tokengate check`: the set-up `serve` would start with, looked at without
/// listening anywhere (docs/DESIGN.md#operators).
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a set-up before it serves: keys, session secrets, replay store, CDN profiles, CAT keys.",
        // One source line per paragraph, as in `tokengate --help` (GateHelpTests).
        discussion: """
            Reads exactly the options and the --config file of `tokengate serve`, loads what serve would load and asks the \
            replay store what serve would ask, without listening anywhere, then reports every finding and every problem, not \
            only the first:

              trusted keys     each key's file, algorithm, size and SHA-256 fingerprint;
                               each skipped file and why (a private key is a problem, a
                               sample key of the repository a warning)
              session secrets  each file's path and size, never its content: missing,
                               unreadable, short or readable by others is a problem
              replay store     Redis answers within 2 s, takes the login and the write;
                               maxmemory-policy is noeviction on every data node (a
                               refused CONFIG: unknown, a warning); Sentinel: what each
                               sentinel names; Cluster: all 16384 slots have a primary
              CDN profiles     each profile's name and kind, its keys' ids and fingerprints
              CAT keys         each --cat-key's kind, id and fingerprint

            Run it as the service would read its files; under systemd, point $CREDENTIALS_DIRECTORY at the files the unit's \
            LoadCredential= lines name, e.g. CREDENTIALS_DIRECTORY=/etc/tokengate tokengate check --config \
            /etc/tokengate/tokengate.conf (docs/DEPLOY.md).

            Exit status: 0 ready to serve (warnings may be listed); 1 at least one problem, each named; 64 the options \
            themselves are refused, as serve refuses them (an unknown option, a missing --requestor, an unreadable --config).
            """,
        version: ProductVersion.version
    )

    @OptionGroup var options: ServeOptions

    @Option(help: ArgumentHelp("The report as text (for people) or json (one object).", valueName: "text|json"))
    var format: CheckFormat = .text

    func validate() throws {
        _ = try options.validatedConfiguration()
    }

    func run() async throws {
        let configuration = try options.validatedConfiguration()
        let report = await SetupCheck.run(configuration)
        print(format == .json ? report.json() : report.text(), terminator: "")
        if !report.findings(.problem).isEmpty { throw ExitCode(1) }
    }
}

/// `tokengate check --format`.
enum CheckFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
