import ArgumentParser

/// The options of `tokengate debugger`.
struct DebuggerOptions: ParsableArguments {
    init() {}

    /// Where the debugger listens unless told otherwise: loopback, one port
    /// above `serve`'s 8089, so both can run on one laptop.
    static let defaultListen = "127.0.0.1:8090"

    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "A trusted public key or certificate (PEM or DER), or a directory of them: the issuer's key the tokens should verify with. Repeatable.",
            valueName: "PATH"
        )
    )
    var keys: [String] = []

    @Flag(help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024). Insecure.")
    var allowInsecureKeys = false

    @Option(help: ArgumentHelp("Address to listen on (loopback only, unless --insecure-listen-anywhere).", valueName: "HOST:PORT"))
    var listen: String = DebuggerOptions.defaultListen

    @Flag(
        help: """
            Allow a --listen address other than loopback. Insecure: anyone who reaches it can have tokens \
            verified against any requestor and time, and sees what they paste in clear (no TLS).
            """
    )
    var insecureListenAnywhere = false

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            """
            With --insecure-listen-anywhere: a name people open the debugger by, answered besides localhost, \
            127.0.0.1, [::1] and the listen host (with no port or the listen port). Any other Host gets 421 \
            (DNS rebinding). Repeatable.
            """,
            valueName: "NAME"
        )
    )
    var allowedHosts: [String] = []
}
