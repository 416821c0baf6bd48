import CDNTokens
import EntitlementTokens

/// Where the expected resource of a request comes from.
enum ResourceSource: Sendable, Equatable {
    /// One resource for every request (`--resource`).
    case fixed(String)
    /// The value of this request header (`--resource-header`); a request
    /// without it is a misconfigured proxy: 500.
    case header(String)
    /// No resource check (`--allow-any-resource`, insecure).
    case any
}

/// The settings of a running gate, checked: what ``ServeOptions`` says once
/// the safe defaults are applied. Keys and secrets are loaded separately
/// (they can be reloaded; this value does not change while serving).
package struct GateConfiguration: Sendable {
    var keyPaths: [String]
    var keyLoading: KeyLoadingOptions
    /// nil only with `--allow-any-requestor`.
    var requestorID: String?
    /// nil accepts any MVPD.
    var allowedMVPDs: [String]?
    var resource: ResourceSource
    var host: String
    var port: Int
    var tokenParams: [String]
    var tokenHeader: String?
    var tokenCookie: String?
    var deviceHeader: String
    /// `--allow-unbound-device` (insecure): a device-bound credential passes a request that names no device.
    var allowUnboundDevice: Bool
    var leewayMilliseconds: Int64
    var replay: ReplaySetting
    var replayFailure: ReplayFailureMode
    var replayDurability: ReplayDurability
    var replayTimeoutMilliseconds: Int
    var sessionSecretPaths: [String]
    /// `--cdn-profile` files, as given: the keys they name are read under
    /// `$CREDENTIALS_DIRECTORY` when relative (``credentialsDirectory``).
    var cdnProfilePaths: [String] = []
    /// `--public-url`, without a trailing `/`: the base players reach the gate by (nil: not set).
    var publicURL: String? = nil
    /// `--manifest-origin-ca`: the CAs a manifest origin is checked against (nil: the system's).
    var manifestOriginCA: String? = nil
    var manifestTimeoutMilliseconds = 2000
    var manifestCacheBytes = 64 * 1024 * 1024
    /// `--cat-key FILE [ID]`: the keys Common Access Tokens are checked with
    /// at the auth endpoints (docs/DESIGN.md#cat-at-the-origin); none reads no CAT.
    var catKeys: [CATKeySetting] = []
    /// `--cat-issuer`: the `iss` a CAT must carry (nil: any issuer the keys vouch for).
    var catIssuer: String? = nil
    /// `--cat-audience`: the `aud` a CAT must name (nil: a CAT with an `aud` is refused).
    var catAudience: String? = nil
    /// `--client-ip-header`: the proxy-set header holding the viewer's IP (a CAT's `catnip`).
    var clientIPHeader: String? = nil
    /// systemd's `$CREDENTIALS_DIRECTORY`, where relative secret paths are read.
    var credentialsDirectory: String? = nil
    var sessionLifetimeSeconds: Int
    var sessionCookie: String
    var sessionParam: String
    var sessionHeader: String
    var verdictCacheSize: Int
    var logFormat: LogFormat
    var shutdownGraceSeconds: Double
    /// `--otlp-endpoint`: where decision spans go (docs/DESIGN.md#span-export); nil exports none.
    var otlpEndpoint: OTLPEndpoint? = nil
    /// `--trace-sample-ratio`, in 0…1: the share of requests that start their
    /// trace whose spans are exported (docs/DESIGN.md#span-export).
    var traceSampleRatio = 1.0
    /// `--debugger`: the web debugger's routes beside the gate's, on loopback only.
    var debugger: Bool
    /// The deadline of a whole request, head and body (`--request-timeout`).
    var requestTimeoutMilliseconds: Int64
    /// The connection limits and the body budget (docs/DESIGN.md#limits-deadlines-and-revocation).
    var limits: ConnectionLimits
    /// Where request handling runs: on the connection's event loop unless `TOKENGATE_EXECUTOR=pool`.
    var executor: RequestExecutor = .eventLoop

    /// What `serve` logs at start, and `tokengate check` says, with `--allow-unbound-device`.
    static let unboundDeviceWarning =
        "--allow-unbound-device (insecure): a device-bound token or session plays from any device whose request omits the device header"

    /// The labelled insecure doors this configuration opened, each with what it lets through.
    var insecureSettings: [String] {
        var doors: [String] = []
        if requestorID == nil { doors.append("--allow-any-requestor (insecure): a token issued for another site plays here") }
        if resource == .any { doors.append("--allow-any-resource (insecure): a token for one channel plays every channel") }
        if allowUnboundDevice { doors.append(Self.unboundDeviceWarning) }
        if keyLoading.allowsInsecureKeySizes { doors.append("--allow-insecure-keys (insecure): RSA keys under 2048 bits are trusted") }
        if replayFailure == .open {
            doors.append("--replay-failure open (insecure): while the replay store does not answer, a media token plays again")
        }
        return doors
    }

    /// The default places a token is looked for in the original URI.
    static let defaultTokenParams = ["token", "auth"]

    /// `HOST:PORT`, `[IPv6]:PORT`.
    static func listenAddress(_ text: String) throws(GateConfigurationError) -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw GateConfigurationError("--listen '\(text)' is not HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw GateConfigurationError("--listen '\(text)' is not HOST:PORT")
        }
        return (host, port)
    }

    /// RFC 9110 token characters: a name a proxy can send.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    static func headerName(_ name: String, option: String) throws(GateConfigurationError) -> String {
        guard isToken(name) else { throw GateConfigurationError("\(option) '\(name)' is not a valid header name") }
        return name
    }

    static func cookieName(_ name: String, option: String) throws(GateConfigurationError) -> String {
        guard isToken(name) else { throw GateConfigurationError("\(option) '\(name)' is not a valid cookie name") }
        return name
    }

    /// Names compared byte for byte with the raw (undecoded) query: no `=`, `&`, `%` or controls.
    static func isParameterName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy {
                $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "&")
                    && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "+")
            }
    }
}

/// One `--cat-key FILE [ID]`: the file's path (under `$CREDENTIALS_DIRECTORY`
/// when relative) and the `kid` that selects it (nil: tried when no key has a token's `kid`).
struct CATKeySetting: Sendable, Equatable {
    var path: String
    var id: String?

    /// `FILE` or `FILE ID`, as a profile's `key` line reads (one space between): the library's reading (``CATKeyFile``).
    init(_ text: String, credentialsDirectory: String?) throws(GateConfigurationError) {
        let file: CATKeyFile
        do { file = try CATKeyFile(text, credentialsDirectory: credentialsDirectory) } catch { throw GateConfigurationError(error.message) }
        path = file.path
        id = file.id
    }
}

/// How many connections the gate holds open and how many body bytes it
/// buffers at once, whatever the clients do (docs/DESIGN.md#limits-deadlines-and-revocation).
struct ConnectionLimits: Sendable, Equatable {
    /// Past it the gate stops accepting; new connections wait in the listen backlog.
    var maximumConnections: Int
    /// One peer address holds at most this many (nil: no per-peer limit).
    var maximumConnectionsPerPeer: Int?
    /// Request bodies in flight share this budget; a request that would exceed it gets 503 before its body is read.
    var maximumBodyBytesInFlight: Int

    init(
        maximumConnections: Int = 4096,
        maximumConnectionsPerPeer: Int? = 1024,
        maximumBodyBytesInFlight: Int = 32 * 1024 * 1024
    ) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerPeer = maximumConnectionsPerPeer
        self.maximumBodyBytesInFlight = maximumBodyBytesInFlight
    }
}

/// The `--replay` setting.
enum ReplaySetting: Sendable, Equatable {
    case memory
    case off
    /// A shared store (docs/DESIGN.md#high-availability), by URL.
    case redis(String)

    /// Standalone, Sentinel and Cluster (docs/DESIGN.md#high-availability), each with its TLS form.
    static let redisSchemes = ["redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster"]

    init(_ text: String) throws(GateConfigurationError) {
        switch text {
        case "memory": self = .memory
        case "off": self = .off
        case _ where Self.redisSchemes.contains(where: { text.hasPrefix($0 + "://") }): self = .redis(text)
        default:
            throw GateConfigurationError(
                "--replay '\(text)': use memory, off, redis://HOST:PORT[/DB], "
                    + "redis-sentinel://HOST:PORT[,HOST:PORT…][/DB]#PRIMARY, redis-cluster://HOST:PORT[,HOST:PORT…] or their rediss… TLS forms"
            )
        }
    }
}

/// Why the gate refuses to start: one line an operator can act on.
package struct GateConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    package var description: String { message }
}

extension KeyRing {
    /// The keys a gate or a debugger starts with: a key that cannot be loaded
    /// stops the start, with the library's reason.
    static func loadAtStart(paths: [String], options: KeyLoadingOptions) throws(GateConfigurationError) -> KeyRing {
        do {
            return try KeyRing.load(paths: paths, options: options)
        } catch {
            throw GateConfigurationError("cannot load the keys: \(error.description)")
        }
    }
}
