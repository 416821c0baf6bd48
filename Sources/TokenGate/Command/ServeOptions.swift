import ArgumentParser

/// The options of `tokengate serve`, exactly as docs/DESIGN.md#the-gate names them, plus the
/// labelled doors (`--allow-any-requestor`, `--allow-any-resource`).
///
/// Every option can also be given in a `--config` file under the same name
/// (see ``ConfigFile``); the command line is read after the file, so a
/// single-valued setting on the command line wins and lists add up.
package struct ServeOptions: ParsableArguments {
    package init() {}

    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "A trusted public key or certificate (PEM or DER), or a directory of them. Repeatable. Reloaded on SIGHUP and when the files change.",
            valueName: "PATH"
        )
    )
    var keys: [String] = []

    @Flag(help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024). Insecure.")
    var allowInsecureKeys = false

    @Option(help: ArgumentHelp("The requestor id every token must carry (your site's id with the vendor).", valueName: "ID"))
    var requestor: String?

    @Flag(help: "Accept tokens of any requestor. Insecure: a token issued for another site plays here.")
    var allowAnyRequestor = false

    @Option(
        name: .customLong("mvpd"),
        help: ArgumentHelp("An MVPD whose tokens are accepted. Repeatable; none given accepts any MVPD.", valueName: "ID")
    )
    var mvpds: [String] = []

    @Option(help: ArgumentHelp("The resource every request is for (one channel per gate).", valueName: "ID"))
    var resource: String?

    @Option(
        help: ArgumentHelp(
            "Take the expected resource of each request from this request header (set it in the proxy per location; the shipped nginx site sends X-Token-Resource). No default: give it, --resource, or --allow-any-resource.",
            valueName: "NAME"
        )
    )
    var resourceHeader: String?

    @Flag(help: "Do not check the resource. Insecure: a token for one channel plays every channel.")
    var allowAnyResource = false

    @Option(help: ArgumentHelp("Address to listen on.", valueName: "HOST:PORT"))
    var listen: String = "127.0.0.1:8089"

    @Option(
        name: .customLong("token-param"),
        help: ArgumentHelp(
            "A query parameter of the original URI that carries the token. Repeatable, tried in order (default: token, then auth).",
            valueName: "NAME"
        )
    )
    var tokenParams: [String] = []

    @Option(help: ArgumentHelp("Also look for the token in this request header.", valueName: "NAME"))
    var tokenHeader: String?

    @Option(help: ArgumentHelp("Also look for the token in this cookie.", valueName: "NAME"))
    var tokenCookie: String?

    @Option(help: ArgumentHelp("The request header holding the device id; hashed as the token's fingerprint is.", valueName: "NAME"))
    var deviceHeader: String = "X-Token-Device-Id"

    @Flag(
        help: """
            Let a device-bound token or session through a request that names no device id. Insecure: a client that omits the \
            device header plays a token bound to another device.
            """
    )
    var allowUnboundDevice = false

    @Option(help: ArgumentHelp("Tolerated clock skew each way, in seconds.", valueName: "SECONDS"))
    var leeway: Double = 30

    @Option(
        help: ArgumentHelp(
            "One-time use of media tokens: memory (this process), off, or a fleet's Redis: redis://HOST:PORT[/DB], redis-sentinel://HOST:PORT[,HOST:PORT…][/DB]#PRIMARY, redis-cluster://HOST:PORT[,HOST:PORT…] (rediss…:// with TLS; password-file=FILE, tls-ca-file=FILE).",
            valueName: "STORE"
        )
    )
    var replay: String = "memory"

    @Option(
        help: ArgumentHelp(
            "When the replay store cannot answer: closed refuses (503), open accepts, counts and logs. Open is insecure.",
            valueName: "closed|open"
        )
    )
    var replayFailure: ReplayFailureMode = .closed

    @Option(
        help: ArgumentHelp(
            "With Redis: primary records a token when the primary answers; replicated also waits for a replica's acknowledgement (no double play across a failover; 503 while no replica answers).",
            valueName: "primary|replicated"
        )
    )
    var replayDurability: ReplayDurability = .primary

    @Option(help: ArgumentHelp("How long to wait for the replay store, in milliseconds.", valueName: "MS"))
    var replayTimeout: Int = 50

    @Option(
        name: .customLong("session-secret"),
        help: ArgumentHelp(
            "A file holding a secret (at least 32 bytes) for playback sessions (HLS/DASH). Repeatable: the first signs, all verify.",
            valueName: "FILE"
        )
    )
    var sessionSecrets: [String] = []

    @Option(
        name: .customLong("cdn-profile"),
        help: ArgumentHelp(
            "A CDN profile (docs/CDN.md): how POST/GET /v1/playback hand a verified viewer a CDN's signed URL, cookies or header (Akamai EdgeAuth, CloudFront, Common Access Token, nginx secure_link). Repeatable, one file each; their keys reload on SIGHUP.",
            valueName: "FILE"
        )
    )
    var cdnProfiles: [String] = []

    @Option(
        name: .customLong("public-url"),
        help: ArgumentHelp(
            "The base URL players reach the gate by (https://gate.example.com): a manifest profile's playback URL and its rewritten playlists point there. Required with a profile of carrier manifest.",
            valueName: "URL"
        )
    )
    var publicURL: String?

    @Option(
        name: .customLong("manifest-origin-ca"),
        help: ArgumentHelp("A PEM file of the CAs a manifest origin's certificate is checked against (default: the system's).", valueName: "FILE")
    )
    var manifestOriginCA: String?

    @Option(help: ArgumentHelp("How long one fetch of a manifest from its origin may take, in milliseconds.", valueName: "MS"))
    var manifestTimeout: Int = 2000

    @Option(help: ArgumentHelp("The bytes the origin's manifests shared among viewers may hold (default 64 MiB).", valueName: "BYTES"))
    var manifestCacheBytes: Int = 64 * 1024 * 1024

    @Option(
        name: .customLong("cat-key"),
        help: ArgumentHelp(
            "Accept a Common Access Token (CTA-5007) at the auth endpoints, checked with this key: hex text is an HMAC 256/256 key, a PEM file a P-256 (ES256) key. Repeatable; 'FILE ID' gives the kid that selects it (keys without an id are tried when none has a token's kid). The CAT travels in the header CTA-Common-Access-Token, the cookie cat or the query parameter cat.",
            valueName: "FILE [ID]"
        )
    )
    var catKeys: [String] = []

    @Option(help: ArgumentHelp("The iss every Common Access Token must carry (with --cat-key).", valueName: "ISS"))
    var catIssuer: String?

    @Option(
        help: ArgumentHelp(
            "The audience this origin answers as (with --cat-key): a CAT's aud must name it. Without it a CAT that carries an aud is refused (RFC 8392 3.1.3).",
            valueName: "AUD"
        )
    )
    var catAudience: String?

    @Option(
        help: ArgumentHelp(
            "The request header in which the proxy gives the viewer's IP (X-Real-IP in the shipped nginx site), for a CAT's catnip; without it a CAT bound to an IP is refused. Two field lines are 400.",
            valueName: "NAME"
        )
    )
    var clientIPHeader: String?

    @Option(help: ArgumentHelp("How long a playback session lasts, in seconds (default 4 hours).", valueName: "SECONDS"))
    var sessionLifetime: Int = 14_400

    @Option(help: ArgumentHelp("The cookie that carries a playback session.", valueName: "NAME"))
    var sessionCookie: String = "tokengate_session"

    @Option(help: ArgumentHelp("The query parameter that carries a playback session.", valueName: "NAME"))
    var sessionParam: String = "tgs"

    @Option(help: ArgumentHelp("The request header that carries a playback session.", valueName: "NAME"))
    var sessionHeader: String = "X-Token-Session"

    @Option(
        help: ArgumentHelp(
            "Verdicts of authentication and authorization tokens kept in memory (never media tokens), and as many CATs authenticated by --cat-key; 0 switches both off.",
            valueName: "N"
        )
    )
    var verdictCacheSize: Int = 10_000

    @Option(
        help: ArgumentHelp(
            "The deadline of a whole request, head and body, from its first byte: an incomplete head is closed, an incomplete body gets 408.",
            valueName: "SECONDS"
        )
    )
    var requestTimeout: Double = 10

    @Option(help: ArgumentHelp("Open connections at most; past it new connections wait in the listen backlog.", valueName: "N"))
    var maxConnections: Int = 4096

    @Option(help: ArgumentHelp("Open connections at most from one peer address (0: no per-peer limit).", valueName: "N"))
    var maxConnectionsPerPeer: Int = 1024

    @Option(
        help: ArgumentHelp(
            "Bytes of request bodies in flight at most, all requests together; past it a request gets 503.",
            valueName: "BYTES"
        )
    )
    var maxBodyBytesInFlight: Int = 32 * 1024 * 1024

    @Option(help: ArgumentHelp("Log lines as json or text.", valueName: "json|text"))
    var logFormat: LogFormat = .text

    @Option(help: ArgumentHelp("Seconds readiness answers 503 before the server stops accepting, on SIGTERM.", valueName: "SECONDS"))
    var shutdownGrace: Double = 2

    @Option(
        help: ArgumentHelp(
            "Send a span per decision to this OTLP/HTTP receiver, a collector beside the gate (default path /v1/traces, port 4318). Off when not given.",
            valueName: "http://HOST[:PORT][/PATH]"
        )
    )
    var otlpEndpoint: String?

    @Option(
        help: ArgumentHelp(
            "With --otlp-endpoint, the share of traces the gate starts that are exported (0 to 1); a caller's traceparent decides for its own trace.",
            valueName: "RATIO"
        )
    )
    var traceSampleRatio: Double = 1

    @Flag(help: "Also serve the web debugger at /debugger (only when --listen is a loopback address; see `tokengate debugger --help`).")
    var debugger = false

    @Option(help: ArgumentHelp("Read settings from FILE: `name = value` lines with the names of these options (docs/GATE.md).", valueName: "FILE"))
    var config: String?
}

extension ReplayFailureMode: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
extension ReplayDurability: ExpressibleByArgument {}
