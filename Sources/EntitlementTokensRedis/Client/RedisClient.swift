public import NIOCore
internal import NIOPosix
internal import NIOSSL
public import RedisRESP
public import ServiceLifecycle
internal import Synchronization

/// A small Redis client for one-time use across a fleet: standalone, Sentinel
/// or Cluster (docs/DESIGN.md#high-availability), with a deadline on every operation, pipelining on
/// a pool of connections per node, reconnection with bounded exponential
/// backoff, and one bound on outstanding requests over all nodes.
///
/// Scoped to what the replay store needs (`AUTH`, `SELECT`, `PING`, `SET`,
/// `WAIT`, and for discovery `SENTINEL get-master-addr-by-name`, `ROLE`,
/// `CLUSTER SHARDS` / `SLOTS`), though ``send(_:)`` takes any command that
/// answers with one reply (in Cluster, routed by its first argument as the
/// key). Safe to share: one client per process is the intended use.
///
/// Run it: the client is a swift-service-lifecycle `Service`, and its
/// ``run()`` is the only place its background work runs (Sentinel's
/// `+switch-master` subscription and poll, the Cluster map refresher). Put
/// it in the application's `ServiceGroup`; ``run()`` shuts it down when the
/// group ends. A standalone or Cluster client never run still answers
/// correctly, only slower to follow a failover: it finds a moved slot by the
/// trouble a request meets, and that request is unavailable. A Sentinel
/// client cannot: a switchover whose old primary still answers as one would
/// go unnoticed, so while its ``run()`` is not running it says so in
/// ``notFollowingSwitchovers`` and the replay store decides nothing.
/// Without ``run()`` call ``shutdown()`` when done.
public final class RedisClient: Sendable {
    public let configuration: RedisClientConfiguration
    private let budget: OutstandingBudget
    let route: Route

    enum Route: Sendable {
        case standalone(RedisNodePool)
        case sentinel(SentinelRouter)
        case cluster(ClusterRouter)
    }

    /// Connections open lazily, on the first request, on NIO's shared event loops.
    public convenience init(configuration: RedisClientConfiguration) throws(RedisClientError) {
        try self.init(configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    }

    /// Connections open lazily, on the first request, on `eventLoopGroup`'s
    /// loops (a server passes its own, so Redis replies arrive on the loops
    /// that serve its requests).
    public init(configuration: RedisClientConfiguration, eventLoopGroup group: any EventLoopGroup) throws(RedisClientError) {
        try configuration.validate()
        self.configuration = configuration
        let budget = OutstandingBudget(
            maxRequests: configuration.maxOutstandingRequests,
            maxBytes: configuration.maxOutstandingBytes
        )
        self.budget = budget
        var sslContext: NIOSSLContext?
        if configuration.endpoint.usesTLS {
            var tls = TLSConfiguration.makeClientConfiguration()
            // Verification is never off: every node, sentinels included, is
            // checked against the CA and its name or address.
            tls.certificateVerification = .fullVerification
            if let caFile = configuration.trustedCAFile {
                tls.trustRoots = .file(caFile)
            }
            do {
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw RedisClientError(.invalidConfiguration, "cannot set up TLS for \(configuration.target): \(error)")
            }
        }
        let makePool: @Sendable (RedisEndpoint, Int?) -> RedisNodePool = { [sslContext] endpoint, connections in
            RedisNodePool(
                configuration: configuration,
                endpoint: endpoint,
                connections: connections,
                group: group,
                sslContext: sslContext,
                budget: budget
            )
        }
        switch configuration.topology {
        case .standalone:
            route = .standalone(makePool(configuration.endpoint, nil))
        case .sentinel(let settings):
            route = .sentinel(
                SentinelRouter(
                    configuration: configuration,
                    settings: settings,
                    group: group,
                    sslContext: sslContext,
                    makePool: makePool
                )
            )
        case .cluster(let seeds):
            route = .cluster(ClusterRouter(configuration: configuration, seeds: seeds, group: group, makePool: makePool))
        }
    }

    /// Requests sent and not yet answered (timed-out ones included), and their bytes.
    public var outstanding: (requests: Int, bytes: Int) { budget.outstanding }

    /// Sends `command` and returns its reply (an error reply is a reply, not
    /// a thrown error), within ``RedisClientConfiguration/operationTimeout``.
    /// In Cluster the command's first argument is the key that routes it.
    public func send(_ command: RESPCommand) async throws(RedisClientError) -> RESPReply {
        try await execute(
            command,
            key: command.arguments.count > 1 ? command.arguments[1] : nil,
            deadline: NIODeadline.now() + configuration.operationTimeout.timeAmount
        )
    }

    /// `PING`, expecting `PONG`, within the deadline: the store can write now.
    /// Standalone and Sentinel: the primary answers (Sentinel discovers it
    /// first when it must). Cluster: at least one primary answers, so one
    /// shard down does not take every gate out of the balancer.
    public func ping() async throws(RedisClientError) {
        let deadline = NIODeadline.now() + configuration.operationTimeout.timeAmount
        switch route {
        case .standalone(let pool):
            try RedisPing.expectPong(try await pool.send(encoded: RedisPing.command, deadline: deadline))
        case .sentinel(let router):
            try RedisPing.expectPong(try await router.execute(encoded: RedisPing.command, deadline: deadline, afterReply: .nothing))
        case .cluster(let router):
            try await router.pingAnyPrimary(deadline: deadline)
        }
    }

    /// Closes every connection and stops discovery; later requests fail with ``RedisClientError/Code/shutDown``.
    public func shutdown() async {
        switch route {
        case .standalone(let pool): await pool.shutdown()
        case .sentinel(let router): await router.shutdown()
        case .cluster(let router): await router.shutdown()
        }
    }

    /// Sends `command` to where `key` lives (any node for nil), by `deadline`;
    /// `afterReply` asks for a follow-up on the same connection (`WAIT`).
    func execute(
        _ command: RESPCommand,
        key: [UInt8]?,
        deadline: NIODeadline,
        afterReply: AfterReply = .nothing
    ) async throws(RedisClientError) -> RESPReply {
        let encoded = command.encoded()
        switch route {
        case .standalone(let pool):
            return try await pool.send(encoded: encoded, deadline: deadline, afterReply: afterReply)
        case .sentinel(let router):
            return try await router.execute(encoded: encoded, deadline: deadline, afterReply: afterReply)
        case .cluster(let router):
            return try await router.execute(
                encoded: encoded,
                slot: key.map { RedisHashSlot.slot(of: $0) },
                deadline: deadline,
                afterReply: afterReply
            )
        }
    }

    /// In Cluster, the slots and the primaries that own them, as the client
    /// routes by them, within ``RedisClientConfiguration/operationTimeout``
    /// (a slot whose primary is not `online` has no owner); nil in the other modes.
    public func clusterTopology() async throws(RedisClientError) -> ClusterTopology? {
        guard case .cluster(let router) = route else { return nil }
        return try await router.topology(before: .now() + configuration.operationTimeout.timeAmount)
    }

    /// In Cluster, each primary with the slot ranges it owns (the topology
    /// fetched first when unknown); nil in the other modes.
    func clusterPrimaries(timeout: Duration) async throws(RedisClientError) -> [(RedisNodeAddress, [ClosedRange<Int>])]? {
        try await clusterPrimaries(deadline: .now() + timeout.timeAmount)
    }

    func clusterPrimaries(deadline: NIODeadline) async throws(RedisClientError) -> [(RedisNodeAddress, [ClosedRange<Int>])]? {
        guard case .cluster(let router) = route else { return nil }
        let topology = try await router.topology(before: deadline)
        let ranges = topology.ranges
        return topology.primaries.map { primary in (primary, ranges.filter { $0.primary == primary }.map(\.slots)) }
    }
}

extension RedisClient {
    /// Non-nil while a Sentinel client's ``run()`` is not running. Only its
    /// poll and its `+switch-master` subscription tell it of a switchover whose
    /// old primary still answers as a primary (`SENTINEL FAILOVER`, or a
    /// primary the sentinels lost and the client did not); every write that
    /// node takes meanwhile is lost when it resyncs, and a token accepted there
    /// would play again. So ``RedisReplayStore`` answers unavailable, and a
    /// readiness probe can say why (docs/DESIGN.md#the-redis-clients-state-machines).
    /// nil in the other modes, which meet every failover as a request's trouble.
    public var notFollowingSwitchovers: RedisClientError? {
        guard case .sentinel(let router) = route, !router.isRunning else { return nil }
        return RedisClientError(
            .notRunning,
            "the Sentinel client for '\(configuration.target)' is not running: "
                + "without its run() it cannot follow a switchover, so it decides nothing; run it in the ServiceGroup"
        )
    }
}

/// The client as a swift-service-lifecycle `Service`: put it in the
/// application's `ServiceGroup`; while it runs it carries the client's
/// background work (Sentinel's discovery, poll and subscription, Cluster's
/// topology refresher) as child tasks, and its connections close when the
/// group shuts down gracefully or is cancelled. No other task of the client
/// exists. Requests work before `run()`, or with no `run()` at all: each call
/// then carries the discovery or refresh it starts, within its own deadline,
/// and a Sentinel client, which has neither subscription nor poll, is
/// ``notFollowingSwitchovers``. After `run()` returns requests fail with `shutDown`
/// (docs/DESIGN.md#the-redis-clients-state-machines).
extension RedisClient: Service {
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            switch route {
            case .standalone: break
            case .sentinel(let router): group.addTask { await router.run() }
            case .cluster(let router): group.addTask { await router.run() }
            }
            // Returns on graceful shutdown; throws CancellationError when cancelled: both end here.
            try? await gracefulShutdown()
            // Shutting down ends the routers' work, which the group then awaits.
            await shutdown()
        }
    }
}
