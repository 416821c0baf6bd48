public import RedisRESP

/// Everything a ``RedisClient`` needs, with safe defaults, in one value.
public struct RedisClientConfiguration: Sendable {
    public var endpoint: RedisEndpoint
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

    /// `redis://[[user]:password@]host[:port][/db]` or `rediss://…`.
    public init(url: String, trustedCAFile: String? = nil) throws(RedisClientError) {
        self.init(endpoint: try RedisEndpoint(url: url), trustedCAFile: trustedCAFile)
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
        if trustedCAFile != nil, !endpoint.usesTLS {
            throw invalid("a CA file is only used with rediss:// (TLS)")
        }
    }
}
