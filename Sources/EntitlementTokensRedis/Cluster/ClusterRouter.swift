internal import NIOCore
internal import RedisRESP
internal import Synchronization

/// Hash-slot routing over a Redis Cluster (docs/DESIGN.md#high-availability): a pool per primary,
/// the topology from `CLUSTER SHARDS` (7.0+) or `CLUSTER SLOTS`, `MOVED` and
/// `ASK` followed within the operation's deadline.
///
/// A replay key lives in exactly one slot, so `SET … NX` stays atomic with no
/// hash tag. A redirection is safe to follow (the node that sent it did not
/// execute the command); a failure after sending is not, and is
/// `.unavailable`. The topology is refreshed in the background, one refresh
/// at a time, on `MOVED`, on `CLUSTERDOWN` / `TRYAGAIN` / `NOREPLICAS` /
/// `MASTERDOWN`, on a node that closes, refuses or times out, and for a slot
/// with no primary; requests for slots on healthy shards never wait on it.
///
/// Every decision is ``ClusterRouterStateMachine``'s; this class only carries
/// its answers out (pools, sends, the topology reads, the refresher). The
/// refresher runs in ``run()``, the client's `Service.run()`, while that runs;
/// without it (a store used with no `ServiceGroup`), in the call that asked
/// for it, after that call's own answer and within its deadline. Either way
/// it is child work of a caller: no task outlives what started it
/// (docs/DESIGN.md#the-redis-clients-state-machines).
final class ClusterRouter: Sendable {
    /// Refreshes start at most this often, however many requests ask.
    static let refreshInterval = TimeAmount.milliseconds(100)
    /// Failed topology reads in a row after which, with a map known, the refresher waits to be asked again.
    static let maxFailedReads = 10

    let configuration: RedisClientConfiguration
    private let group: any EventLoopGroup
    private let makePool: @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    private let state: Mutex<State>

    /// The machine and what carries its answers out: a pool per node it
    /// routes to, the refresher, and the promise requests wait on while no map is known.
    private struct State {
        var machine: ClusterRouterStateMachine
        var pools: [RedisNodeAddress: RedisNodePool] = [:]
        /// Completed by the first read that succeeds after requests began to wait.
        var topologyWaiters: EventLoopPromise<ClusterTopology>?
        /// Wakes ``run()``'s refresher while it runs.
        var runner: AsyncStream<Void>.Continuation?
    }

    init(
        configuration: RedisClientConfiguration,
        seeds: [RedisNodeAddress],
        group: any EventLoopGroup,
        makePool: @escaping @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    ) {
        self.configuration = configuration
        self.group = group
        self.makePool = makePool
        let settings = ClusterRouterStateMachine.Settings(
            refreshInterval: UInt64(Self.refreshInterval.nanoseconds),
            maxFailedReads: Self.maxFailedReads
        )
        state = Mutex(State(machine: ClusterRouterStateMachine(settings: settings, seeds: seeds)))
    }

    /// Topologies read since start, for tests.
    var refreshCount: Int { state.withLock { $0.machine.reads } }
    /// Why the last topology read failed, for tests and messages.
    var lastRefreshFailure: RedisClientError? { state.withLock { $0.machine.lastFailure } }
    /// `MOVED` and `ASK` redirections followed since start, for tests.
    var redirectsFollowed: (moved: Int, ask: Int) { state.withLock { ($0.machine.movedFollowed, $0.machine.askFollowed) } }

    /// The pool of `address`, made on first use.
    private func pool(_ address: RedisNodeAddress, _ state: inout State) -> RedisNodePool {
        if let pool = state.pools[address] { return pool }
        var endpoint = configuration.endpoint
        endpoint.host = address.host
        endpoint.port = address.port
        let pool = makePool(endpoint, nil)
        state.pools[address] = pool
        return pool
    }

    /// Sends to the slot's primary and follows redirections
    /// (``ClusterRedirectFollower`` decides), every hop within `deadline`.
    func execute(
        encoded command: [UInt8],
        slot: Int?,
        deadline: NIODeadline,
        afterReply: AfterReply
    ) async throws(RedisClientError) -> RESPReply {
        var refresh = false
        let first: RedisNodeAddress
        do {
            (first, refresh) = try await owner(of: slot, before: deadline)
        } catch {
            if error.refreshOwed { await startRefresher(before: deadline) }
            throw error.error
        }
        var follower = ClusterRedirectFollower(target: first, slot: slot)
        while true {
            let pool = state.withLock { self.pool(follower.target, &$0) }
            let step: ClusterRedirectFollower.Step
            do {
                step = follower.received(
                    try await pool.send(
                        encoded: command,
                        deadline: deadline,
                        prelude: follower.asking ? Self.askingCommand : nil,
                        afterReply: afterReply
                    )
                )
            } catch {
                step = follower.failed(error)
            }
            // A refresh this request starts runs after its answer (when no
            // ``run()`` carries it), so the redirection is followed first.
            switch step {
            case .answer(let reply, let refreshTopology):
                if refreshTopology, state.withLock({ $0.machine.requestRefresh() }) { refresh = true }
                if refresh { await startRefresher(before: deadline) }
                return reply
            case .follow(let movedSlot):
                let target = follower.target
                if state.withLock({ $0.machine.redirected(movedSlot: movedSlot, to: target) }) { refresh = true }
            case .fail(let error, let refreshTopology):
                if refreshTopology, state.withLock({ $0.machine.requestRefresh() }) { refresh = true }
                if refresh { await startRefresher(before: deadline) }
                throw error
            }
        }
    }

    static let askingCommand = RESPCommand("ASKING").encoded()

    /// A routing failure, and whether this request started a refresher it must still run.
    private struct RouteFailure: Error {
        let error: RedisClientError
        let refreshOwed: Bool
    }

    /// The primary of `slot` (any primary for nil), reading the topology
    /// first when none is known, and whether this request started the refresher.
    private func owner(of slot: Int?, before deadline: NIODeadline) async throws(RouteFailure) -> (RedisNodeAddress, Bool) {
        while true {
            let route = state.withLock { $0.machine.route(slot: slot, now: MachineTime.now) }
            switch route {
            case .send(let address, let start):
                return (address, start)
            case .fail(let error, let start):
                throw RouteFailure(error: error, refreshOwed: start)
            case .awaitTopology(let start):
                do throws(RedisClientError) {
                    _ = try await awaitTopology(before: deadline, started: start)
                } catch {
                    throw RouteFailure(error: error, refreshOwed: false)
                }
            }
        }
    }

    func topology(timeout: Duration) async throws(RedisClientError) -> ClusterTopology {
        try await topology(before: .now() + timeout.timeAmount)
    }

    /// The known topology, or the one a refresh reads by `deadline`.
    func topology(before deadline: NIODeadline) async throws(RedisClientError) -> ClusterTopology {
        try await awaitTopology(before: deadline, started: nil)
    }

    /// The known topology, or the next one read, by `deadline`. `started`:
    /// whether the machine started the refresher for this caller when it
    /// routed it (nil: not routed, ask now).
    private func awaitTopology(before deadline: NIODeadline, started: Bool?) async throws(RedisClientError) -> ClusterTopology {
        enum Known {
            case topology(ClusterTopology)
            case wait(EventLoopFuture<ClusterTopology>, start: Bool)
            case shutDown
        }
        let known = state.withLock { state -> Known in
            // Shut down first: the map outlives shutdown, and a caller given it would make pools again.
            if state.machine.isShutDown { return .shutDown }
            if let topology = state.machine.topology { return .topology(topology) }
            let start = started ?? state.machine.requestRefresh()
            let promise = state.topologyWaiters ?? group.next().makePromise(of: ClusterTopology.self)
            state.topologyWaiters = promise
            return .wait(promise.futureResult, start: start)
        }
        switch known {
        case .topology(let topology):
            return topology
        case .shutDown:
            throw ClusterRouterStateMachine.shutDownError
        case .wait(let future, let start):
            // This caller waits for a map anyway: the refresher it runs may sleep until its deadline.
            if start { await startRefresher(before: deadline, sleeping: true) }
            return try await future.boundedValue(before: deadline, context: "cluster topology") { [self] in
                let why = self.state.withLock { $0.machine.lastFailure }
                // The last attempt's code, as in Sentinel: an untrusted certificate
                // (tlsFailed) or a refused login is a setting to fix, not a wait.
                return RedisClientError(why?.code ?? .connectionFailed, "no cluster topology yet" + (why.map { ": \($0.message)" } ?? ""))
            }
        }
    }

    /// Readiness: at least one primary answers `PING` by `deadline`.
    func pingAnyPrimary(deadline: NIODeadline) async throws(RedisClientError) {
        _ = try await topology(before: deadline)
        let pools = state.withLock { state in state.machine.primariesToPing().map { self.pool($0, &state) } }
        let failures = await withTaskGroup(of: RedisClientError?.self) { group in
            for pool in pools {
                group.addTask {
                    do throws(RedisClientError) {
                        try RedisPing.expectPong(try await pool.send(encoded: RedisPing.command, deadline: deadline))
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var failures: [RedisClientError] = []
            for await result in group {
                guard let result else {
                    group.cancelAll()
                    return [RedisClientError]?.none
                }
                failures.append(result)
            }
            return failures
        }
        if let failures {
            await requestRefresh(before: deadline)
            let first = failures.first ?? RedisClientError(.connectionFailed, "no primary known")
            throw RedisClientError(first.code, "no primary of the cluster answers: " + failures.map(\.message).joined(separator: "; "))
        }
    }

    /// Asks for a refresh; one runs at a time, at most one per ``refreshInterval``.
    func requestRefresh(before deadline: NIODeadline) async {
        if state.withLock({ $0.machine.requestRefresh() }) { await startRefresher(before: deadline) }
    }

    /// Runs the refresher whenever the machine starts it, until the router
    /// is shut down or the caller cancelled: the client's `Service.run()`.
    func run() async {
        let (wakeups, runner) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let shutDown = state.withLock { state in
            if !state.machine.isShutDown { state.runner = runner }
            return state.machine.isShutDown
        }
        if shutDown { return }
        for await _ in wakeups {
            await runRefresher(sleeping: true)
        }
        state.withLock { state in state.runner = nil }
    }

    /// The machine started the refresher: ``run()`` carries it when it runs;
    /// otherwise this call does, until `deadline`; unless `sleeping`, a sleep
    /// pauses it, and the first request after the interval starts it again.
    private func startRefresher(before deadline: NIODeadline, sleeping: Bool = false) async {
        if let runner = state.withLock({ $0.runner }) {
            runner.yield()
            return
        }
        await MachineTime.run({ await self.runRefresher(sleeping: sleeping) }, until: deadline)
    }

    /// Carries out the machine's refresh steps until it says stop: reads,
    /// waits (`sleeping`; else it pauses), and after a read that installed a
    /// map, the waiting requests answered and the retired pools shut down.
    private func runRefresher(sleeping: Bool) async {
        while true {
            // A cancelled caller pauses it.
            let step = state.withLock { state in
                Task.isCancelled ? nil : state.machine.nextRefreshStep(now: MachineTime.now, mayWait: sleeping)
            }
            switch step {
            case nil:
                state.withLock { $0.machine.refresherPaused() }
                return
            case .stop:
                return
            case .sleep(let until):
                await MachineTime.sleep(until: until)
            case .read(let candidates):
                let result = await readTopology(asking: candidates)
                let (retired, waiters) = state.withLock { state -> ([RedisNodePool], EventLoopPromise<ClusterTopology>?) in
                    switch result {
                    case .success(let topology):
                        let gone = state.machine.readSucceeded(topology, now: MachineTime.now)
                        let pools = gone.compactMap { state.pools.removeValue(forKey: $0) }
                        let waiters = state.topologyWaiters
                        state.topologyWaiters = nil
                        return (pools, waiters)
                    case .failure where Task.isCancelled:
                        state.machine.readAbandoned()
                        return ([], nil)
                    case .failure(let error):
                        state.machine.readFailed(error, now: MachineTime.now)
                        return ([], nil)
                    }
                }
                if case .success(let topology) = result { waiters?.succeed(topology) }
                for pool in retired { await pool.shutdown() }
            }
        }
    }

    /// Asks `candidates` in turn for `CLUSTER SHARDS` (or `CLUSTER SLOTS`
    /// where SHARDS is unknown): the first answer, or the last failure.
    private func readTopology(asking candidates: [RedisNodeAddress]) async -> Result<ClusterTopology, RedisClientError> {
        var failure = RedisClientError(.connectionFailed, "no node of the cluster to ask")
        for address in candidates {
            let pool = state.withLock { self.pool(address, &$0) }
            do throws(RedisClientError) {
                return .success(try await readTopology(from: address, pool: pool))
            } catch {
                failure = error
            }
        }
        return .failure(failure)
    }

    private func readTopology(from address: RedisNodeAddress, pool: RedisNodePool) async throws(RedisClientError) -> ClusterTopology {
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        let shards = try await pool.send(encoded: RESPCommand("CLUSTER", "SHARDS").encoded(), deadline: deadline)
        var slots: RESPReply?
        if case .error = shards {
            let reply = try await pool.send(encoded: RESPCommand("CLUSTER", "SLOTS").encoded(), deadline: deadline)
            if case .error = reply { throw RedisClientError.notExpected("CLUSTER SLOTS", reply) }
            slots = reply
        }
        let topology: ClusterTopology
        do throws(RedisReplyShapeError) {
            if let slots {
                topology = try ClusterTopology(slotsReply: slots, askedHost: address.host)
            } else {
                topology = try ClusterTopology(
                    shardsReply: shards,
                    askedHost: address.host,
                    tls: configuration.endpoint.usesTLS
                )
            }
        } catch {
            throw RedisClientError(.unexpectedReply, "\(address): \(error.message)")
        }
        guard topology.coveredSlotCount > 0 else {
            throw RedisClientError(.unexpectedReply, "\(address) serves no slot (not part of a cluster yet?)")
        }
        return topology
    }

    func shutdown() async {
        let (pools, runner, waiters) = state.withLock { state in
            // The machine names every node with a pool; the dictionary holds them.
            _ = state.machine.shutDown()
            let pools = Array(state.pools.values)
            state.pools = [:]
            let waiters = state.topologyWaiters
            state.topologyWaiters = nil
            let runner = state.runner
            state.runner = nil
            return (pools, runner, waiters)
        }
        waiters?.fail(ClusterRouterStateMachine.shutDownError)
        // ``run()`` returns once its refresher sees the shut-down machine.
        runner?.finish()
        for pool in pools { await pool.shutdown() }
    }
}
