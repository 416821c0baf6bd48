internal import NIOCore
internal import NIOSSL
internal import RedisRESP
internal import Synchronization

/// Where the primary is, by the sentinels (docs/DESIGN.md#high-availability): asks them
/// `SENTINEL get-master-addr-by-name`, confirms the answer with `ROLE` on the
/// node itself, and writes there until something says it moved.
///
/// Re-discovery starts on a sentinel's `+switch-master` message (a
/// subscription, ``SentinelSubscriber``), a `READONLY` reply (the node was
/// demoted), a connection that closed or could not be made, or a timed-out
/// request (a partitioned primary): the request that saw it is
/// `.unavailable` (a write is never repeated elsewhere: it may have landed),
/// and one discovery runs in the background, asking the sentinels again every
/// ``retryDelay`` until one names a node that answers `ROLE` `master`. Until
/// then requests go to the last primary and fail fast (its pool waits out its
/// reconnect backoff), so the window of `.unavailable` is the sentinels'
/// detection time plus one retry. A message only starts a discovery: its
/// addresses are never written to.
///
/// A failover can also leave the old primary up and answering `master`: a
/// switchover (`SENTINEL FAILOVER`), or a primary the sentinels could not
/// reach but we can. The sentinels demote it only after 8 s or more (they wait
/// before converting a node that says `master`), and every write it takes
/// meanwhile is lost when it resyncs from the new primary: a double allow.
/// The `+switch-master` message is what moves the store then. As a fallback
/// (a lost subscription, a sentinel that missed the event, the part of a
/// failover before the switch is announced), while a primary is known one
/// sentinel is also asked every ``watchInterval`` whom it names; another
/// address starts a discovery.
final class SentinelRouter: Sendable {
    static let retryDelay = TimeAmount.milliseconds(100)
    static let defaultWatchInterval = TimeAmount.milliseconds(250)

    let configuration: RedisClientConfiguration
    let settings: RedisSentinelSettings
    private let group: any EventLoopGroup
    private let makePool: @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    private let sentinels: [RedisNodePool]
    private let subscriber: SentinelSubscriber
    private let watchNanoseconds = Atomic<Int64>(SentinelRouter.defaultWatchInterval.nanoseconds)
    private let state: Mutex<State>

    private struct State {
        var primary: (address: RedisNodeAddress, pool: RedisNodePool)?
        /// Completed when the running discovery confirms a primary.
        var discovery: EventLoopPromise<RedisNodePool>?
        var discoveryTask: Task<Void, Never>?
        /// Asks a sentinel every ``watchInterval`` whether the primary moved; started with the first primary.
        var watchTask: Task<Void, Never>?
        /// The `+switch-master` subscription; started with the first primary.
        var subscriptionTask: Task<Void, Never>?
        var lastFailure: RedisClientError?
        /// The sentinel that answered last: asked first next time.
        var preferredSentinel = 0
        var isShutDown = false
        var discoveries = 0
    }

    /// `sslContext`: the one every pool uses (`makePool`'s), for the subscription's connections.
    init(configuration: RedisClientConfiguration, settings: RedisSentinelSettings, group: any EventLoopGroup,
         sslContext: NIOSSLContext?, makePool: @escaping @Sendable (RedisEndpoint, Int?) -> RedisNodePool) {
        self.configuration = configuration
        self.settings = settings
        self.group = group
        self.makePool = makePool
        let endpoints = configuration.sentinelEndpoints
        sentinels = endpoints.map { makePool($0, 1) }
        subscriber = SentinelSubscriber(sentinels: endpoints, primaryName: settings.primaryName,
                                        configuration: configuration, group: group, sslContext: sslContext)
        state = Mutex(State())
    }

    /// How often the fallback poll asks a sentinel whom it names (tests make
    /// it slow to show what the subscription does alone).
    var watchInterval: TimeAmount {
        get { .nanoseconds(watchNanoseconds.load(ordering: .relaxed)) }
        set { watchNanoseconds.store(newValue.nanoseconds, ordering: .relaxed) }
    }

    /// The sentinel the `+switch-master` subscription is on now, for tests.
    var subscribedSentinel: Int? { subscriber.subscribedSentinel }
    /// `+switch-master` messages for our primary heard since start, for tests.
    var switchMessages: Int { subscriber.switchMessages }

    /// The primary now, for tests and messages.
    var currentPrimary: RedisNodeAddress? { state.withLock { $0.primary?.address } }
    /// Discoveries that confirmed a primary since start.
    var discoveryCount: Int { state.withLock { $0.discoveries } }

    func execute(encoded command: [UInt8], deadline: NIODeadline, afterReply: AfterReply) async throws(RedisClientError) -> RESPReply {
        let pool = try await primaryPool(before: deadline)
        do {
            let reply = try await pool.send(encoded: command, deadline: deadline, afterReply: afterReply)
            // READONLY: the node is a replica now. NOREPLICAS: a primary that
            // lost its replicas, which is also what a demoted or partitioned
            // old primary says while the sentinels name another: both ask the
            // sentinels again (one discovery at a time); the same answer keeps the node.
            if case .error(let message) = reply,
               message.starts(with: "READONLY".utf8) || message.starts(with: "NOREPLICAS".utf8) {
                rediscover(after: pool)
            }
            return reply
        } catch {
            switch error.code {
            case .connectionClosed, .connectionFailed, .timedOut, .tlsFailed, .protocolError:
                rediscover(after: pool)
            default:
                break
            }
            throw error
        }
    }

    /// The confirmed primary's pool, or the running discovery's, waited for until `deadline`.
    private func primaryPool(before deadline: NIODeadline) async throws(RedisClientError) -> RedisNodePool {
        let (known, waitFor) = state.withLock { state -> (RedisNodePool?, EventLoopFuture<RedisNodePool>?) in
            if let primary = state.primary { return (primary.pool, nil) }
            return (nil, startDiscovery(&state))
        }
        if let known { return known }
        guard let waitFor else { throw RedisClientError(.shutDown, "the Redis client was shut down") }
        return try await waitFor.boundedValue(before: deadline, context: "sentinel discovery failed") { [self] in
            let why = self.state.withLock { $0.lastFailure }
            // The last attempt's code: a refused sentinel login is authenticationFailed (a setting to fix).
            return RedisClientError(why?.code ?? .connectionFailed,
                "no primary of '\(RedisURL.escaped(self.settings.primaryName))' found through the sentinels yet"
                + (why.map { ": \($0.message)" } ?? ""))
        }
    }

    /// Starts discovery when something says `pool` is no longer the primary's.
    func rediscover(after pool: RedisNodePool) {
        state.withLock { state in
            guard state.primary?.pool === pool else { return }
            _ = startDiscovery(&state)
        }
    }

    /// The running discovery's future, starting one if none runs; nil once shut down.
    private func startDiscovery(_ state: inout State) -> EventLoopFuture<RedisNodePool>? {
        guard !state.isShutDown else { return nil }
        if let running = state.discovery { return running.futureResult }
        let promise = group.next().makePromise(of: RedisNodePool.self)
        state.discovery = promise
        state.discoveryTask = Task { [self] in await self.discover(promise) }
        return promise.futureResult
    }

    /// Asks the sentinels, in turn, until one names a node that confirms it is the primary.
    private func discover(_ promise: EventLoopPromise<RedisNodePool>) async {
        while !Task.isCancelled {
            let start = state.withLock { $0.preferredSentinel }
            for step in sentinels.indices {
                let index = (start + step) % sentinels.count
                do throws(RedisClientError) {
                    let pool = try await confirmPrimary(askingSentinel: index)
                    promise.succeed(pool)
                    return
                } catch {
                    state.withLock { $0.lastFailure = error }
                }
                if Task.isCancelled { break }
            }
            try? await Task.sleep(nanoseconds: UInt64(Self.retryDelay.nanoseconds))
        }
        promise.fail(RedisClientError(.shutDown, "the Redis client was shut down"))
    }

    /// Whom sentinel `index` names as the primary (nil: it knows no such name).
    private func primaryNamed(bySentinel index: Int, deadline: NIODeadline) async throws(RedisClientError) -> RedisNodeAddress? {
        let sentinel = sentinels[index]
        let reply = try await sentinel.send(
            encoded: RESPCommand("SENTINEL", "get-master-addr-by-name", settings.primaryName).encoded(), deadline: deadline)
        if case .error = reply { throw RedisClientError.notExpected("SENTINEL get-master-addr-by-name", reply) }
        do {
            return try SentinelReply.primaryAddress(reply)
        } catch {
            throw RedisClientError(.unexpectedReply, "sentinel \(sentinel.endpoint.host):\(sentinel.endpoint.port): \(error.message)")
        }
    }

    /// Every ``watchInterval`` (holding the router only while it asks), until
    /// cancelled by ``shutdown()``.
    private static func watch(_ router: SentinelRouter) -> Task<Void, Never> {
        Task { [weak router] in
            var skip = 0
            while !Task.isCancelled {
                guard let interval = router?.watchInterval else { return }
                try? await Task.sleep(nanoseconds: UInt64(max(0, interval.nanoseconds)))
                guard let router else { return }
                skip = await router.checkPrimaryMoved(skip: skip)
            }
        }
    }

    /// The `+switch-master` subscription, from sentinel `first`, until
    /// cancelled by ``shutdown()`` or the router is gone (the task holds the
    /// subscriber, never the router).
    private static func subscribe(_ router: SentinelRouter, from first: Int) -> Task<Void, Never> {
        let subscriber = router.subscriber
        let notify: @Sendable (SentinelSubscriber.Notice) -> Bool = { [weak router] notice in
            guard let router else { return false }
            router.heard(notice)
            return true
        }
        return Task { await subscriber.run(from: first, notify: notify) }
    }

    /// A `+switch-master` for our primary, or a subscription made again after
    /// one was lost (a switch in the gap went unheard): ask the sentinel that
    /// spoke first, in a discovery (one at a time; its answer is confirmed
    /// with `ROLE`, and the same answer keeps the current pool).
    private func heard(_ notice: SentinelSubscriber.Notice) {
        let index: Int
        switch notice {
        case .switchMaster(let sentinel), .subscribed(let sentinel, again: true):
            index = sentinel
        case .subscribed(_, again: false):
            return  // the first subscription follows a discovery that just confirmed a primary
        }
        state.withLock { state in
            guard !state.isShutDown else { return }
            state.preferredSentinel = index
            _ = startDiscovery(&state)
        }
    }

    /// While a primary is known and no discovery runs: the sentinel that
    /// answered last (or, after it failed to answer, the next ones in turn)
    /// names another node → discover. A sentinel that does not answer changes
    /// nothing (requests find out for themselves whether the primary still
    /// takes writes). Returns how many sentinels to skip next time.
    private func checkPrimaryMoved(skip: Int) async -> Int {
        let known = state.withLock { state -> (RedisNodeAddress, RedisNodePool, Int)? in
            guard !state.isShutDown, state.discovery == nil, let primary = state.primary else { return nil }
            return (primary.address, primary.pool, state.preferredSentinel)
        }
        guard let (address, pool, preferred) = known else { return skip }
        let index = (preferred + skip) % sentinels.count
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        do throws(RedisClientError) {
            if let named = try await primaryNamed(bySentinel: index, deadline: deadline), named != address {
                rediscover(after: pool)
            }
            return skip
        } catch {
            return (skip + 1) % sentinels.count
        }
    }

    private func confirmPrimary(askingSentinel index: Int) async throws(RedisClientError) -> RedisNodePool {
        let sentinel = sentinels[index]
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        let named = try await primaryNamed(bySentinel: index, deadline: deadline)
        guard let address = named else {
            throw RedisClientError(.unexpectedReply, "sentinel \(sentinel.endpoint.host):\(sentinel.endpoint.port) knows no primary named '\(RedisURL.escaped(settings.primaryName))'")
        }
        // The current pool when the sentinels still name its node (a
        // connection dropped, the node did not move), else a new one.
        let current = state.withLock { $0.primary }
        let pool: RedisNodePool
        if let current, current.address == address, !current.pool.isShutDown {
            pool = current.pool
        } else {
            var endpoint = configuration.endpoint
            endpoint.host = address.host
            endpoint.port = address.port
            pool = makePool(endpoint, nil)
            // A lost connection is not silently reopened to the same
            // address: that may now be a restarted, empty server calling
            // itself primary. The sentinels are asked again first.
            pool.suspendOnLoss { [weak self, weak pool] in
                guard let self, let pool else { return }
                self.rediscover(after: pool)
            }
        }
        let role: RedisRole
        do throws(RedisClientError) {
            let roleReply = try await pool.send(encoded: RESPCommand("ROLE").encoded(), deadline: deadline, confirming: true)
            if case .error = roleReply { throw RedisClientError.notExpected("ROLE", roleReply) }
            do throws(RedisReplyShapeError) {
                role = try RedisRole(roleReply: roleReply)
            } catch {
                throw RedisClientError(.unexpectedReply, "\(address): \(error.message)")
            }
        } catch {
            if pool !== current?.pool { await pool.shutdown() }
            throw error
        }
        guard role == .primary else {
            if pool !== current?.pool { await pool.shutdown() }
            throw RedisClientError(.unexpectedReply, "the sentinels name \(address) as the primary, and it answers ROLE \(role.rawValue)")
        }
        let (replaced, accepted) = state.withLock { state -> (RedisNodePool?, Bool) in
            guard !state.isShutDown else { return (nil, false) }
            let old = state.primary?.pool
            state.primary = (address, pool)
            state.preferredSentinel = index
            state.discovery = nil
            state.discoveryTask = nil
            state.lastFailure = nil
            state.discoveries += 1
            if state.watchTask == nil { state.watchTask = Self.watch(self) }
            if state.subscriptionTask == nil { state.subscriptionTask = Self.subscribe(self, from: index) }
            return (old === pool ? nil : old, true)
        }
        guard accepted else {
            await pool.shutdown()
            throw RedisClientError(.shutDown, "the Redis client was shut down")
        }
        pool.resume()
        if let replaced { await replaced.shutdown() }
        return pool
    }

    func shutdown() async {
        let (primary, tasks) = state.withLock { state -> (RedisNodePool?, [Task<Void, Never>]) in
            state.isShutDown = true
            let taken = (state.primary?.pool, [state.discoveryTask, state.watchTask, state.subscriptionTask].compactMap { $0 })
            state.primary = nil
            state.discoveryTask = nil
            state.watchTask = nil
            state.subscriptionTask = nil
            return taken
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await primary?.shutdown()
        for sentinel in sentinels { await sentinel.shutdown() }
    }
}
