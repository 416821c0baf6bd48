import EntitlementTokens

/// Where the expected resource of a request comes from.
public enum ResourceSource: Sendable, Equatable {
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
public struct GateConfiguration: Sendable {
    public var keyPaths: [String]
    public var keyLoading: KeyLoadingOptions
    /// nil only with `--allow-any-requestor`.
    public var requestorID: String?
    /// nil accepts any MVPD.
    public var allowedMVPDs: [String]?
    public var resource: ResourceSource
    public var host: String
    public var port: Int
    public var tokenParams: [String]
    public var tokenHeader: String?
    public var tokenCookie: String?
    public var deviceHeader: String
    /// `--allow-unbound-device` (insecure): a device-bound credential passes a request that names no device.
    public var allowUnboundDevice: Bool
    public var leewayMilliseconds: Int64
    public var replay: ReplaySetting
    public var replayFailure: ReplayFailureMode
    public var replayTimeoutMilliseconds: Int
    public var sessionSecretPaths: [String]
    public var sessionLifetimeSeconds: Int
    public var sessionCookie: String
    public var sessionParam: String
    public var sessionHeader: String
    public var verdictCacheSize: Int
    public var logFormat: LogFormat
    public var shutdownGraceSeconds: Double
    /// `--debugger`: the web debugger's routes beside the gate's, on loopback only.
    public var debugger: Bool
    /// The deadline of a whole request, head and body (`--request-timeout`).
    public var requestTimeoutMilliseconds: Int64
    /// The connection limits and the body budget (SPEC §9, "Limits, deadlines and revocation").
    public var limits: ConnectionLimits

    /// The default places a token is looked for in the original URI.
    public static let defaultTokenParams = ["token", "auth"]

    /// Applies the safe defaults of SPEC §9: no requestor and no source for
    /// the expected resource is a refusal to start, unless the labelled
    /// insecure door was opened.
    public init(_ options: ServeOptions) throws(GateConfigurationError) {
        guard !options.keys.isEmpty else {
            throw GateConfigurationError("no --key given: the gate needs the issuer's public key(s) to verify signatures")
        }
        keyPaths = options.keys
        keyLoading = KeyLoadingOptions(allowsInsecureKeySizes: options.allowInsecureKeys)

        switch (options.requestor, options.allowAnyRequestor) {
        case (let requestor?, false):
            guard !requestor.isEmpty else { throw GateConfigurationError("--requestor is empty") }
            requestorID = requestor
        case (nil, true): requestorID = nil
        case (_?, true): throw GateConfigurationError("--requestor and --allow-any-requestor contradict each other")
        case (nil, false):
            throw GateConfigurationError("no --requestor given: say which requestor id tokens must carry (or --allow-any-requestor, insecure)")
        }
        allowedMVPDs = options.mvpds.isEmpty ? nil : options.mvpds

        let sources = [options.resource != nil, options.resourceHeader != nil, options.allowAnyResource].filter { $0 }.count
        guard sources == 1 else {
            throw GateConfigurationError(sources == 0
                ? "no source for the expected resource: give --resource ID, or --resource-header NAME (usually X-Token-Resource, set by the proxy), or --allow-any-resource (insecure)"
                : "give only one of --resource, --resource-header and --allow-any-resource")
        }
        if let resource = options.resource {
            guard !resource.isEmpty else { throw GateConfigurationError("--resource is empty") }
            self.resource = .fixed(resource)
        } else if let header = options.resourceHeader {
            self.resource = .header(try Self.headerName(header, option: "--resource-header"))
        } else {
            self.resource = .any
        }

        (host, port) = try Self.listenAddress(options.listen)
        tokenParams = options.tokenParams.isEmpty ? Self.defaultTokenParams : options.tokenParams
        for name in tokenParams + [options.sessionParam] where !Self.isParameterName(name) {
            throw GateConfigurationError("'\(name)' is not a usable query parameter name")
        }
        tokenHeader = nil
        tokenCookie = nil
        if let name = options.tokenHeader { tokenHeader = try Self.headerName(name, option: "--token-header") }
        if let name = options.tokenCookie { tokenCookie = try Self.cookieName(name, option: "--token-cookie") }
        deviceHeader = try Self.headerName(options.deviceHeader, option: "--device-header")
        allowUnboundDevice = options.allowUnboundDevice

        guard options.leeway.isFinite, options.leeway >= 0, options.leeway <= 86_400 else {
            throw GateConfigurationError("--leeway must be between 0 and 86400 seconds")
        }
        leewayMilliseconds = Int64((options.leeway * 1000).rounded())
        replay = try ReplaySetting(options.replay)
        replayFailure = options.replayFailure
        guard (1...60_000).contains(options.replayTimeout) else {
            throw GateConfigurationError("--replay-timeout must be between 1 and 60000 ms")
        }
        replayTimeoutMilliseconds = options.replayTimeout

        sessionSecretPaths = options.sessionSecrets
        guard (1...7 * 86_400).contains(options.sessionLifetime) else {
            throw GateConfigurationError("--session-lifetime must be between 1 second and 7 days")
        }
        sessionLifetimeSeconds = options.sessionLifetime
        sessionCookie = try Self.cookieName(options.sessionCookie, option: "--session-cookie")
        sessionParam = options.sessionParam
        sessionHeader = try Self.headerName(options.sessionHeader, option: "--session-header")

        guard (0...10_000_000).contains(options.verdictCacheSize) else {
            throw GateConfigurationError("--verdict-cache-size must be between 0 (off) and 10000000")
        }
        verdictCacheSize = options.verdictCacheSize
        logFormat = options.logFormat
        guard options.shutdownGrace.isFinite, (0...300).contains(options.shutdownGrace) else {
            throw GateConfigurationError("--shutdown-grace must be between 0 and 300 seconds")
        }
        shutdownGraceSeconds = options.shutdownGrace
        // The debugger lets its caller choose the requestor and "now": an
        // oracle that must not face the network the gate serves.
        guard !options.debugger || LoopbackAddress.isLoopback(host) else {
            throw GateConfigurationError("--debugger needs a loopback --listen address (127.0.0.1, ::1); "
                + "this gate listens on \(options.listen). Run `tokengate debugger` on the machine you look from instead")
        }
        debugger = options.debugger
        guard options.requestTimeout.isFinite, options.requestTimeout >= 0.1, options.requestTimeout <= 600 else {
            throw GateConfigurationError("--request-timeout must be between 0.1 and 600 seconds")
        }
        requestTimeoutMilliseconds = Int64((options.requestTimeout * 1000).rounded())
        guard (1...1_000_000).contains(options.maxConnections) else {
            throw GateConfigurationError("--max-connections must be between 1 and 1000000")
        }
        guard (0...1_000_000).contains(options.maxConnectionsPerPeer) else {
            throw GateConfigurationError("--max-connections-per-peer must be between 0 (no limit) and 1000000")
        }
        guard (ReportEndpoints.maximumBodyBytes...(1 << 40)).contains(options.maxBodyBytesInFlight) else {
            throw GateConfigurationError("--max-body-bytes-in-flight must be at least \(ReportEndpoints.maximumBodyBytes) (one whole body)")
        }
        limits = ConnectionLimits(maximumConnections: options.maxConnections,
                                  maximumConnectionsPerPeer: options.maxConnectionsPerPeer == 0 ? nil : options.maxConnectionsPerPeer,
                                  maximumBodyBytesInFlight: options.maxBodyBytesInFlight)
    }

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
        !name.isEmpty && name.utf8.allSatisfy { byte in
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
        !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "&")
            && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "+") }
    }
}

/// How many connections the gate holds open and how many body bytes it
/// buffers at once, whatever the clients do (SPEC §9).
public struct ConnectionLimits: Sendable, Equatable {
    /// Past it the gate stops accepting; new connections wait in the listen backlog.
    public var maximumConnections: Int
    /// One peer address holds at most this many (nil: no per-peer limit).
    public var maximumConnectionsPerPeer: Int?
    /// Request bodies in flight share this budget; a request that would exceed it gets 503 before its body is read.
    public var maximumBodyBytesInFlight: Int

    public init(maximumConnections: Int = 4096, maximumConnectionsPerPeer: Int? = 1024,
                maximumBodyBytesInFlight: Int = 32 * 1024 * 1024) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerPeer = maximumConnectionsPerPeer
        self.maximumBodyBytesInFlight = maximumBodyBytesInFlight
    }
}

/// The `--replay` setting.
public enum ReplaySetting: Sendable, Equatable {
    case memory
    case off
    /// A shared store (SPEC §10), by URL.
    case redis(String)

    init(_ text: String) throws(GateConfigurationError) {
        switch text {
        case "memory": self = .memory
        case "off": self = .off
        case _ where text.hasPrefix("redis://") || text.hasPrefix("rediss://"): self = .redis(text)
        default: throw GateConfigurationError("--replay '\(text)': use memory, off, redis://HOST:PORT[/DB] or rediss://…")
        }
    }
}

/// Why the gate refuses to start: one line an operator can act on.
public struct GateConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
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
