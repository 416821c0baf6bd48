internal import EntitlementTokens
internal import FoundationEssentials
public import RedisRESP

/// Everything a ``RedisClient`` needs, with safe defaults, in one value.
public struct RedisClientConfiguration: Sendable {
    /// The data nodes' login, TLS and database; in standalone mode also their address.
    public var endpoint: RedisEndpoint
    /// Standalone, Sentinel or Cluster: how the node to write to is found.
    public var topology: RedisTopology = .standalone
    /// PEM file of the CA certificates that may sign the server's certificate
    /// (`rediss://` only); nil trusts the system's store.
    public var trustedCAFile: String?
    /// The longest any operation may take, from the call to its answer
    /// (connection set-up included). The caller never waits longer.
    public var operationTimeout: Duration
    /// TCP connect, TLS handshake and `AUTH`/`SELECT` together.
    public var connectTimeout: Duration
    /// Connections kept open; concurrent requests are pipelined on them.
    public var maxConnections: Int
    /// Requests sent and not yet answered, over all connections (a request
    /// that timed out still counts until its answer arrives or its
    /// connection closes). Beyond it: ``RedisClientError/Code/overloaded``.
    public var maxOutstandingRequests: Int
    /// The same bound in bytes of commands.
    public var maxOutstandingBytes: Int
    /// After a failed connect the next attempt waits this long, doubling per
    /// failure up to ``maximumReconnectDelay`` (with jitter); meanwhile
    /// requests fail at once with the last connect error.
    public var initialReconnectDelay: Duration
    public var maximumReconnectDelay: Duration
    /// A connection whose oldest request has waited this long for an answer
    /// is closed (the server hangs or the network dropped it silently), which
    /// frees its outstanding requests and lets a new connection be made.
    public var stalledConnectionTimeout: Duration
    /// Bounds on the server's replies.
    public var replyLimits: RESPLimits

    public init(endpoint: RedisEndpoint, trustedCAFile: String? = nil) {
        self.endpoint = endpoint
        self.trustedCAFile = trustedCAFile
        operationTimeout = .milliseconds(50)
        connectTimeout = .seconds(1)
        maxConnections = 2
        maxOutstandingRequests = 4096
        maxOutstandingBytes = 4 * 1024 * 1024
        initialReconnectDelay = .milliseconds(20)
        maximumReconnectDelay = .seconds(1)
        stalledConnectionTimeout = .seconds(1)
        replyLimits = .default
    }

    /// Any of the URL forms of docs/DESIGN.md#high-availability (see ``RedisTopology``):
    /// `redis://[[user]:password@]host[:port][/db]`, `rediss://…`,
    /// `redis-sentinel://[[user]:password@]host:port[,host:port…][/db]#primaryName`,
    /// `rediss-sentinel://…`, `redis-cluster://[[user]:password@]host:port[,host:port…]`,
    /// `rediss-cluster://…`, with the parameters `password-file=`,
    /// `sentinel-password-file=`, `sentinel-user=`, `sentinel-password=`,
    /// `tls-server-name=` and `tls-ca-file=` (the URL's own `trustedCAFile`,
    /// so that a gate's `--replay` can name it; not both). Password files are
    /// read now, a relative path (of these and of `tls-ca-file=`) under
    /// `credentialsDirectory` (by default `$CREDENTIALS_DIRECTORY`), by the
    /// secret-file rule (docs/DESIGN.md#secret-files).
    public init(
        url: String,
        trustedCAFile: String? = nil,
        credentialsDirectory: String? = nil
    ) throws(RedisClientError) {
        let parsed = try RedisURL.parse(url)
        let credentialsDirectory = credentialsDirectory ?? ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
        self.init(endpoint: parsed.endpoint, trustedCAFile: trustedCAFile)
        topology = parsed.topology
        if let file = parsed.caFile {
            guard trustedCAFile == nil else {
                throw RedisClientError(.invalidConfiguration, "a CA file both in the URL (tls-ca-file=) and as trustedCAFile")
            }
            self.trustedCAFile = try RedisURL.resolve(file, parameter: "tls-ca-file", credentialsDirectory: credentialsDirectory)
        }
        if let file = parsed.passwordFile {
            endpoint.password = try RedisURL.readSecret(file, parameter: "password-file", credentialsDirectory: credentialsDirectory)
        }
        if let file = parsed.sentinelPasswordFile, case .sentinel(var settings) = topology {
            settings.password = try RedisURL.readSecret(file, parameter: "sentinel-password-file", credentialsDirectory: credentialsDirectory)
            topology = .sentinel(settings)
        }
    }

    /// The sentinels as the client reaches them (Sentinel mode; empty
    /// otherwise): the sentinels' login, database 0, and the data nodes' TLS
    /// and `tls-server-name=`, because sentinels are as trusted as the data
    /// nodes (docs/DESIGN.md#trust-in-sentinels).
    public var sentinelEndpoints: [RedisEndpoint] {
        guard case .sentinel(let settings) = topology else { return [] }
        return settings.sentinels.map { address in
            var endpoint = RedisEndpoint(
                host: address.host,
                port: address.port,
                usesTLS: self.endpoint.usesTLS,
                username: settings.username,
                password: settings.password,
                database: 0
            )
            endpoint.tlsServerName = self.endpoint.tlsServerName
            return endpoint
        }
    }

    /// This configuration for the one node at `address`, standalone, with the
    /// data nodes' login and TLS (or `endpoint`'s own, for a sentinel): to ask
    /// one node of a Sentinel group or a Cluster something of its own.
    public func standalone(at address: RedisNodeAddress, endpoint: RedisEndpoint? = nil) -> RedisClientConfiguration {
        var single = self
        single.topology = .standalone
        if let endpoint { single.endpoint = endpoint }
        single.endpoint.host = address.host
        single.endpoint.port = address.port
        return single
    }

    /// Mode and address(es), never a password: "redis 10.0.0.5:6379",
    /// "redis-sentinel mymaster via 10.0.0.7:26379,10.0.0.8:26379",
    /// "redis-cluster via 10.0.0.5:6379,…". How logs and `/readyz` name the store.
    public var target: String {
        let tls = endpoint.usesTLS ? " (TLS)" : ""
        switch topology {
        case .standalone:
            let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
            return "redis \(host):\(endpoint.port)" + (endpoint.database != 0 ? "/\(endpoint.database)" : "") + tls
        case .sentinel(let settings):
            return "redis-sentinel \(TerminalText.escaped(settings.primaryName)) via "
                + settings.sentinels.map(\.description).joined(separator: ",") + tls
        case .cluster(let seeds):
            return "redis-cluster via " + seeds.map(\.description).joined(separator: ",") + tls
        }
    }

    func validate() throws(RedisClientError) {
        func invalid(_ why: String) -> RedisClientError { RedisClientError(.invalidConfiguration, why) }
        guard operationTimeout > .zero, connectTimeout > .zero else { throw invalid("timeouts must be positive") }
        guard (1...64).contains(maxConnections) else { throw invalid("maxConnections must be 1…64") }
        guard maxOutstandingRequests > 0, maxOutstandingBytes > 0 else {
            throw invalid("the bounds on outstanding requests must be positive")
        }
        guard initialReconnectDelay > .zero, maximumReconnectDelay >= initialReconnectDelay else {
            throw invalid("reconnect delays must be positive, the maximum no less than the initial")
        }
        guard stalledConnectionTimeout > .zero else { throw invalid("stalledConnectionTimeout must be positive") }
        guard endpoint.database >= 0 else { throw invalid("the database number must not be negative") }
        switch topology {
        case .standalone: break
        case .sentinel(let settings):
            guard !settings.sentinels.isEmpty, !settings.primaryName.isEmpty else { throw invalid("Sentinel needs sentinels and a primary name") }
        case .cluster(let seeds):
            guard !seeds.isEmpty else { throw invalid("Cluster needs at least one seed node") }
            guard endpoint.database == 0 else { throw invalid("Redis Cluster has database 0 only") }
        }
        if trustedCAFile != nil, !endpoint.usesTLS {
            throw invalid("a CA file is only used with rediss:// (TLS)")
        }
    }
}
