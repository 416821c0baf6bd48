import EntitlementTokens

/// What each exit status of `tokeninspect` means (docs/DESIGN.md#exit-codes):
/// the one definition that `tokeninspect --help` and the man page's EXIT
/// STATUS section both print.
enum ExitStatus {
    static let table = ExitStatusTable([
        (0, "every token or credential valid (inspect: every one decoded; metadata: every value decrypted; mint: issued)"),
        (1, "at least one failed (inspect: did not decode; metadata: a value not decrypted; mint: the key could not sign)"),
        (2, "nothing usable: an unreadable file, an unreadable or refused key, empty input, an output file that cannot be written"),
        (
            64,
            "usage error: a bare @, a malformed mint --field, an unknown option (with a \"did you mean\"), options that do not go together; inspect or verify given a HAR capture"
        ),
        (65, "har: the file is not a HAR (not JSON by the strict rules, no log.entries, a member named twice)"),
    ])
}
