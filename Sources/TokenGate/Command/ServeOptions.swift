import ArgumentParser

/// The options of `tokengate serve`, exactly as SPEC §9 names them, plus the
/// labelled doors (`--allow-any-requestor`, `--allow-any-resource`).
///
/// Every option can also be given in a `--config` file under the same name
/// (see ``ConfigFile``); the command line is read after the file, so a
/// single-valued setting on the command line wins and lists add up.
public struct ServeOptions: ParsableArguments {
    public init() {}

    @Option(name: .customLong("key"), help: ArgumentHelp(
        "A trusted public key or certificate (PEM or DER), or a directory of them. Repeatable. Reloaded on SIGHUP and when the files change.",
        valueName: "PATH"))
    public var keys: [String] = []

    @Flag(help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024). Insecure.")
    public var allowInsecureKeys = false

    @Option(help: ArgumentHelp("The requestor id every token must carry (your site's id with the vendor).", valueName: "ID"))
    public var requestor: String?

    @Flag(help: "Accept tokens of any requestor. Insecure: a token issued for another site plays here.")
    public var allowAnyRequestor = false

    @Option(name: .customLong("mvpd"), help: ArgumentHelp("An MVPD whose tokens are accepted. Repeatable; none given accepts any MVPD.", valueName: "ID"))
    public var mvpds: [String] = []

    @Option(help: ArgumentHelp("The resource every request is for (one channel per gate).", valueName: "ID"))
    public var resource: String?

    @Option(help: ArgumentHelp(
        "Take the expected resource of each request from this request header (set it in the proxy per location). Default name: X-Token-Resource.",
        valueName: "NAME"))
    public var resourceHeader: String?

    @Flag(help: "Do not check the resource. Insecure: a token for one channel plays every channel.")
    public var allowAnyResource = false

    @Option(help: ArgumentHelp("Address to listen on.", valueName: "HOST:PORT"))
    public var listen: String = "127.0.0.1:8089"

    @Option(name: .customLong("token-param"), help: ArgumentHelp(
        "A query parameter of the original URI that carries the token. Repeatable, tried in order (default: token, then auth).",
        valueName: "NAME"))
    public var tokenParams: [String] = []

    @Option(help: ArgumentHelp("Also look for the token in this request header.", valueName: "NAME"))
    public var tokenHeader: String?

    @Option(help: ArgumentHelp("Also look for the token in this cookie.", valueName: "NAME"))
    public var tokenCookie: String?

    @Option(help: ArgumentHelp("The request header holding the device id; hashed as the token's fingerprint is (SPEC §5).", valueName: "NAME"))
    public var deviceHeader: String = "X-Token-Device-Id"

    @Flag(help: """
        Let a device-bound token or session through a request that names no device id. Insecure: a client that omits the \
        device header plays a token bound to another device.
        """)
    public var allowUnboundDevice = false

    @Option(help: ArgumentHelp("Tolerated clock skew each way, in seconds.", valueName: "SECONDS"))
    public var leeway: Double = 30

    @Option(help: ArgumentHelp("One-time use of media tokens: memory (this process), off, or redis://[user:pass@]HOST:PORT[/DB] / rediss://… (a fleet).",
                               valueName: "STORE"))
    public var replay: String = "memory"

    @Option(help: ArgumentHelp("When the replay store cannot answer: closed refuses (503), open accepts, counts and logs. Open is insecure.",
                               valueName: "closed|open"))
    public var replayFailure: ReplayFailureMode = .closed

    @Option(help: ArgumentHelp("How long to wait for the replay store, in milliseconds.", valueName: "MS"))
    public var replayTimeout: Int = 50

    @Option(name: .customLong("session-secret"), help: ArgumentHelp(
        "A file holding a secret (at least 32 bytes) for playback sessions (HLS/DASH). Repeatable: the first signs, all verify.",
        valueName: "FILE"))
    public var sessionSecrets: [String] = []

    @Option(help: ArgumentHelp("How long a playback session lasts, in seconds (default 4 hours).", valueName: "SECONDS"))
    public var sessionLifetime: Int = 14_400

    @Option(help: ArgumentHelp("The cookie that carries a playback session.", valueName: "NAME"))
    public var sessionCookie: String = "tokengate_session"

    @Option(help: ArgumentHelp("The query parameter that carries a playback session.", valueName: "NAME"))
    public var sessionParam: String = "tgs"

    @Option(help: ArgumentHelp("The request header that carries a playback session.", valueName: "NAME"))
    public var sessionHeader: String = "X-Token-Session"

    @Option(help: ArgumentHelp("Verdicts of authentication and authorization tokens kept in memory (never media tokens); 0 switches the cache off.",
                               valueName: "N"))
    public var verdictCacheSize: Int = 10_000

    @Option(help: ArgumentHelp(
        "The deadline of a whole request, head and body, from its first byte: an incomplete head is closed, an incomplete body gets 408.",
        valueName: "SECONDS"))
    public var requestTimeout: Double = 10

    @Option(help: ArgumentHelp("Open connections at most; past it new connections wait in the listen backlog.", valueName: "N"))
    public var maxConnections: Int = 4096

    @Option(help: ArgumentHelp("Open connections at most from one peer address (0: no per-peer limit).", valueName: "N"))
    public var maxConnectionsPerPeer: Int = 1024

    @Option(help: ArgumentHelp("Bytes of request bodies in flight at most, all requests together; past it a request gets 503.",
                               valueName: "BYTES"))
    public var maxBodyBytesInFlight: Int = 32 * 1024 * 1024

    @Option(help: ArgumentHelp("Log lines as json or text.", valueName: "json|text"))
    public var logFormat: LogFormat = .text

    @Option(help: ArgumentHelp("Seconds readiness answers 503 before the server stops accepting, on SIGTERM.", valueName: "SECONDS"))
    public var shutdownGrace: Double = 2

    @Flag(help: "Also serve the web debugger at /debugger (only when --listen is a loopback address; see `tokengate debugger --help`).")
    public var debugger = false

    @Option(help: ArgumentHelp("Read settings from FILE: `name = value` lines with the names of these options (see README).", valueName: "FILE"))
    public var config: String?
}

extension ReplayFailureMode: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
