internal import EntitlementTokens
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
///
/// Every decision is ``SentinelRouterStateMachine``'s; this class only
/// carries its answers out. The discovery, the poll and the subscription run
/// in ``run()``, the client's `Service.run()`, while that runs: it is the only
/// home of background work. Without it (a store used with no `ServiceGroup`)
/// the call that needs a discovery runs it, within its deadline, and there is
/// neither poll nor subscription: the store follows a failover only by the
/// trouble a request meets (a lost or refused connection, a timeout,
/// `READONLY`, `NOREPLICAS`), each such request `.unavailable`
/// (docs/DESIGN.md#the-redis-clients-state-machines).
final class SentinelRouter: Sendable {
    static let retryDelay = TimeAmount.milliseconds(100)
    static let defaultWatchInterval = TimeAmount.milliseconds(250)

    let configuration: RedisClientConfiguration
    let settings: RedisSentinelSettings
    private let group: any EventLoopGroup
    private let makePool: @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    private let sentinels: [RedisNodePool]
    private let subscriber: SentinelSubscriber
    private let state: Mutex<State>

    /// The machine and what carries its answers out.
    private struct State {
        var machine: SentinelRouterStateMachine
        /// The confirmed primary's pool.
        var primaryPool: RedisNodePool?
        /// Completed when a discovery confirms a primary, for the requests waiting on one.
        var primaryWaiters: EventLoopPromise<RedisNodePool>?
        /// Wakes ``run()`` while it runs.
        var runner: AsyncStream<Wake>.Continuation?
    }

    private enum Wake: Sendable {
        case discovery
        case background(from: Int)
    }

    /// `sslContext`: the one every pool uses (`makePool`'s), for the subscription's connections.
    init(
        configuration: RedisClientConfiguration,
        settings: RedisSentinelSettings,
        group: any EventLoopGroup,
        sslContext: NIOSSLContext?,
        makePool: @escaping @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    ) {
        self.configuration = configuration
        self.settings = settings
        self.group = group
        self.makePool = makePool
        let endpoints = configuration.sentinelEndpoints
        sentinels = endpoints.map { makePool($0, 1) }
        subscriber = SentinelSubscriber(
            sentinels: endpoints,
            primaryName: settings.primaryName,
            configuration: configuration,
            group: group,
            sslContext: sslContext
        )
        state = Mutex(
            State(
                machine: SentinelRouterStateMachine(
                    settings: .init(
                        sentinelCount: endpoints.count,
                        retryDelay: UInt64(Self.retryDelay.nanoseconds),
                        watchInterval: UInt64(Self.defaultWatchInterval.nanoseconds)
                    )
                )
            )
        )
    }

    /// How often the fallback poll asks a sentinel whom it names (tests make
    /// it slow to show what the subscription does alone).
    var watchInterval: TimeAmount {
        get { .nanoseconds(Int64(state.withLock { $0.machine.settings.watchInterval })) }
        set { state.withLock { $0.machine.settings.watchInterval = UInt64(max(0, newValue.nanoseconds)) } }
    }

    /// The sentinel the `+switch-master` subscription is on now, for tests.
    var subscribedSentinel: Int? { subscriber.subscribedSentinel }
    /// `+switch-master` messages for our primary heard since start, for tests.
    var switchMessages: Int { subscriber.switchMessages }

    /// Whether ``run()`` runs now: the poll and the subscription exist only then.
    var isRunning: Bool { state.withLock { $0.runner != nil && !$0.machine.isShutDown } }

    /// The primary now, for tests and messages.
    var currentPrimary: RedisNodeAddress? { state.withLock { $0.machine.primary } }
    /// Discoveries that confirmed a primary since start.
    var discoveryCount: Int { state.withLock { $0.machine.discoveries } }

    func execute(encoded command: [UInt8], deadline: NIODeadline, afterReply: AfterReply) async throws(RedisClientError) -> RESPReply {
        let (pool, address, owed) = try await primaryPool(before: deadline)
        var discover = owed
        do {
            let reply = try await pool.send(encoded: command, deadline: deadline, afterReply: afterReply)
            // READONLY: the node is a replica now. NOREPLICAS: a primary that
            // lost its replicas, which is also what a demoted or partitioned
            // old primary says while the sentinels name another: both ask the
            // sentinels again (one discovery at a time); the same answer keeps the node.
            if case .error(let message) = reply,
                message.starts(with: "READONLY".utf8) || message.starts(with: "NOREPLICAS".utf8)
            {
                if state.withLock({ $0.machine.primaryInTrouble(address) }) { discover = true }
            }
            // A discovery this request starts runs after its answer (when no ``run()`` carries it).
            if discover { await startDiscovery(before: deadline) }
            return reply
        } catch {
            switch error.code {
            case .connectionClosed, .connectionFailed, .timedOut, .tlsFailed, .protocolError:
                if state.withLock({ $0.machine.primaryInTrouble(address) }) { discover = true }
            default:
                break
            }
            if discover { await startDiscovery(before: deadline) }
            throw error
        }
    }

    /// The confirmed primary's pool and address, or the discovery's, waited
    /// for until `deadline`; and whether this request must run a discovery left owed.
    private func primaryPool(before deadline: NIODeadline) async throws(RedisClientError) -> (RedisNodePool, RedisNodeAddress, Bool) {
        enum Known {
            case pool(RedisNodePool, RedisNodeAddress, Bool)
            case wait(EventLoopFuture<RedisNodePool>, start: Bool)
            case fail(RedisClientError)
        }
        while true {
            let known = state.withLock { state -> Known in
                switch state.machine.route(now: MachineTime.now) {
                case .send(let address, let start):
                    guard let pool = state.primaryPool else { return .fail(SentinelRouterStateMachine.shutDownError) }
                    return .pool(pool, address, start)
                case .fail(let error):
                    return .fail(error)
                case .awaitPrimary(let start):
                    let promise = state.primaryWaiters ?? group.next().makePromise(of: RedisNodePool.self)
                    state.primaryWaiters = promise
                    return .wait(promise.futureResult, start: start)
                }
            }
            switch known {
            case .pool(let pool, let address, let owed):
                return (pool, address, owed)
            case .fail(let error):
                throw error
            case .wait(let future, let start):
                // This caller waits for a primary anyway: the discovery it runs may sleep until its deadline.
                if start { await startDiscovery(before: deadline, sleeping: true) }
                _ = try await future.boundedValue(before: deadline, context: "sentinel discovery failed") { [self] in
                    let why = self.state.withLock { $0.machine.lastFailure }
                    // The last attempt's code: a refused sentinel login is authenticationFailed (a setting to fix).
                    return RedisClientError(
                        why?.code ?? .connectionFailed,
                        "no primary of '\(TerminalText.escaped(self.settings.primaryName))' found through the sentinels yet"
                            + (why.map { ": \($0.message)" } ?? "")
                    )
                }
            }
        }
    }

    /// Runs the discovery, the fallback poll and the subscription whenever
    /// the machine starts them, until the router is shut down or the caller
    /// cancelled: the client's `Service.run()`. The poll and the subscription
    /// start at once when a primary is known, else with the first one; they
    /// end with this call, the subscription's connection closed.
    func run() async {
        // The machine starts one discovery at a time and the background once per
        // run, so no more than two wake-ups ever wait; eight bounds it regardless.
        let (wakeups, runner) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingOldest(8))
        enum Start {
            case no
            case yes(background: Int?)
        }
        let start = state.withLock { state -> Start in
            // One runner at a time.
            guard !state.machine.isShutDown, state.runner == nil else { return .no }
            state.runner = runner
            return .yes(background: state.machine.runStarted())
        }
        guard case .yes(let first) = start else { return }
        if let first { runner.yield(.background(from: first)) }
        await withDiscardingTaskGroup { group in
            for await wake in wakeups {
                switch wake {
                case .discovery:
                    group.addTask { await self.runDiscovery(sleeping: true) }
                case .background(let first):
                    group.addTask { await self.watch() }
                    group.addTask { await self.subscribe(from: first) }
                }
            }
            group.cancelAll()
        }
        state.withLock { state in
            state.runner = nil
            state.machine.runEnded()
        }
    }

    /// The machine started a discovery: ``run()`` carries it when it runs;
    /// otherwise this call does, until `deadline`; unless `sleeping`, a sleep
    /// pauses it, and the first request after the retry delay starts it again.
    private func startDiscovery(before deadline: NIODeadline, sleeping: Bool = false) async {
        if let runner = state.withLock({ $0.runner }) {
            runner.yield(.discovery)
            return
        }
        await MachineTime.run({ await self.runDiscovery(sleeping: sleeping) }, until: deadline)
    }

    /// Carries out the machine's discovery steps until it says stop. A
    /// cancelled caller pauses it; a question it cancelled is asked again on resuming.
    private func runDiscovery(sleeping: Bool) async {
        while true {
            let step = state.withLock { state in
                Task.isCancelled ? nil : state.machine.nextDiscoveryStep(now: MachineTime.now, mayWait: sleeping)
            }
            switch step {
            case nil:
                state.withLock { $0.machine.discoveryPaused() }
                return
            case .stop:
                return
            case .sleep(let until):
                await MachineTime.sleep(until: until)
            case .ask(let index):
                do throws(RedisClientError) {
                    guard let named = try await primaryNamed(bySentinel: index) else {
                        let sentinel = sentinels[index].endpoint
                        throw RedisClientError(
                            .unexpectedReply,
                            "sentinel \(sentinel.host):\(sentinel.port) knows no primary named '\(TerminalText.escaped(settings.primaryName))'"
                        )
                    }
                    state.withLock { $0.machine.sentinelNamed(named, by: index) }
                } catch {
                    failed(error, step: .ask(sentinel: index))
                }
            case .confirm(let address, let index):
                do throws(RedisClientError) {
                    try await confirm(address, namedBy: index)
                } catch {
                    failed(error, step: .confirm(address, namedBy: index))
                }
            }
        }
    }

    /// A step failed: a failure, or, when the caller running it was cancelled, a step owed again.
    private func failed(_ error: RedisClientError, step: SentinelRouterStateMachine.DiscoveryStep) {
        state.withLock { state in
            if Task.isCancelled {
                state.machine.askAbandoned(step)
            } else {
                state.machine.discoveryFailed(error, now: MachineTime.now)
            }
        }
    }

    /// Whom sentinel `index` names as the primary (nil: it knows no such name), within the connect timeout.
    private func primaryNamed(bySentinel index: Int) async throws(RedisClientError) -> RedisNodeAddress? {
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        let sentinel = sentinels[index]
        let reply = try await sentinel.send(
            encoded: RESPCommand("SENTINEL", "get-master-addr-by-name", settings.primaryName).encoded(),
            deadline: deadline
        )
        if case .error = reply { throw RedisClientError.notExpected("SENTINEL get-master-addr-by-name", reply) }
        do {
            return try SentinelReply.primaryAddress(reply)
        } catch {
            throw RedisClientError(.unexpectedReply, "sentinel \(sentinel.endpoint.host):\(sentinel.endpoint.port): \(error.message)")
        }
    }

    /// Asks `address` for its `ROLE`; `master` makes it the primary, on the
    /// current pool when the sentinels still name its node (a connection
    /// dropped, the node did not move), else on a new one.
    private func confirm(_ address: RedisNodeAddress, namedBy index: Int) async throws(RedisClientError) {
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        let current = state.withLock { state in state.machine.primary == address ? state.primaryPool : nil }
        let pool: RedisNodePool
        if let current, !current.isShutDown {
            pool = current
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
                self.lost(pool, address: address)
            }
        }
        let isNew = pool !== current
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
            if isNew { await pool.shutdown() }
            throw error
        }
        guard role == .primary else {
            if isNew { await pool.shutdown() }
            throw RedisClientError(.unexpectedReply, "the sentinels name \(address) as the primary, and it answers ROLE \(role.rawValue)")
        }
        let (accepted, replaced, waiters, background) = state.withLock {
            state
                -> (Bool, RedisNodePool?, EventLoopPromise<RedisNodePool>?, Int?) in
            guard !state.machine.isShutDown else { return (false, nil, nil, nil) }
            let confirmed = state.machine.primaryConfirmed(address, namedBy: index, now: MachineTime.now)
            let old = state.primaryPool
            state.primaryPool = pool
            let waiters = state.primaryWaiters
            state.primaryWaiters = nil
            return (true, old === pool ? nil : old, waiters, confirmed.startBackground)
        }
        guard accepted else {
            await pool.shutdown()
            throw SentinelRouterStateMachine.shutDownError
        }
        pool.resume()
        waiters?.succeed(pool)
        if let background { startBackground(from: background) }
        if let replaced { await replaced.shutdown() }
    }

    /// A connection of `pool` was lost: unless it is no longer the primary's, discover again.
    private func lost(_ pool: RedisNodePool, address: RedisNodeAddress) {
        let start = state.withLock { state in state.primaryPool === pool && state.machine.primaryInTrouble(address) }
        guard start else { return }
        if let runner = state.withLock({ $0.runner }) {
            runner.yield(.discovery)
        }
        // Without ``run()``: the pool refuses requests until a discovery
        // confirms the node again, and the next request resumes the owed one.
        else {
            state.withLock { $0.machine.discoveryPaused() }
        }
    }

    /// The poll and the subscription, from sentinel `first`: children of
    /// ``run()``, the only place they run (the machine starts them only while it runs).
    private func startBackground(from first: Int) {
        state.withLock { $0.runner }?.yield(.background(from: first))
    }

    /// The fallback poll, until shut down or cancelled.
    private func watch() async {
        while !Task.isCancelled {
            let step = state.withLock { $0.machine.nextWatchStep(now: MachineTime.now) }
            switch step {
            case .ask(let index):
                do throws(RedisClientError) {
                    let named = try await primaryNamed(bySentinel: index)
                    if state.withLock({ $0.machine.watchAnswered(named) }) {
                        await startDiscovery(before: .now() + configuration.connectTimeout.timeAmount)
                    }
                } catch {
                    state.withLock { $0.machine.watchFailed() }
                }
            case .sleep(let until):
                await MachineTime.sleep(until: until)
            case .stop:
                return
            }
        }
    }

    /// The `+switch-master` subscription, from sentinel `first`, until
    /// cancelled or the router is gone.
    private func subscribe(from first: Int) async {
        await subscriber.run(from: first) { [weak self] notice in
            guard let self else { return false }
            let start = self.state.withLock { $0.machine.heard(notice) }
            if start {
                if let runner = self.state.withLock({ $0.runner }) {
                    runner.yield(.discovery)
                } else {
                    // ``run()`` is ending: owed, resumed by the next request.
                    self.state.withLock { $0.machine.discoveryPaused() }
                }
            }
            return true
        }
    }

    func shutdown() async {
        let (primary, runner, waiters) = state.withLock { state in
            state.machine.shutDown()
            let taken = (state.primaryPool, state.runner, state.primaryWaiters)
            state.primaryPool = nil
            state.runner = nil
            state.primaryWaiters = nil
            return taken
        }
        waiters?.fail(SentinelRouterStateMachine.shutDownError)
        // ``run()`` ends its children once its wake-ups end.
        runner?.finish()
        await primary?.shutdown()
        for sentinel in sentinels { await sentinel.shutdown() }
    }
}
