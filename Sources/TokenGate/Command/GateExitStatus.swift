import EntitlementTokens

/// What each exit status of `tokengate` means (docs/DESIGN.md#exit-codes): the
/// one definition that `tokengate --help` and the man page's EXIT STATUS
/// section both print.
enum GateExitStatus {
    static let table = ExitStatusTable([
        (0, "a clean shutdown (SIGTERM, SIGINT)"),
        (1, "the server stopped on an error after it started (its listen address taken, for one)"),
        (2, "the gate or the debugger cannot start: a key, a secret, a CDN profile, or a replay store that refuses the login"),
        (64, "usage error: an unknown or missing option, settings that do not go together, a --config file it cannot read"),
    ])
}
