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
final class ClusterRouter: Sendable {
    /// Refreshes start at most this often, however many requests ask.
    static let refreshInterval = TimeAmount.milliseconds(100)

    let configuration: RedisClientConfiguration
    private let seeds: [RedisNodeAddress]
    private let group: any EventLoopGroup
    private let makePool: @Sendable (RedisEndpoint, Int?) -> RedisNodePool
    private let state: Mutex<State>

    private struct State {
        var topology: ClusterTopology?
        /// Slots a `MOVED` sent elsewhere since the last refresh.
        var moved: [Int: RedisNodeAddress] = [:]
        var pools: [RedisNodeAddress: RedisNodePool] = [:]
        /// The running refresh; completes with the topology it read.
        var refresh: EventLoopPromise<ClusterTopology>?
        var refreshTask: Task<Void, Never>?
        /// Another refresh was asked for while one ran.
        var refreshAgain = false
        var lastFailure: RedisClientError?
        var isShutDown = false
        var refreshes = 0
        var movedFollowed = 0
        var askFollowed = 0
    }

    init(configuration: RedisClientConfiguration, seeds: [RedisNodeAddress], group: any EventLoopGroup,
         makePool: @escaping @Sendable (RedisEndpoint, Int?) -> RedisNodePool) {
        self.configuration = configuration
        self.seeds = seeds
        self.group = group
        self.makePool = makePool
        state = Mutex(State())
    }

    /// Topologies read since start, for tests.
    var refreshCount: Int { state.withLock { $0.refreshes } }
    /// Why the last topology read failed, for tests and messages.
    var lastRefreshFailure: RedisClientError? { state.withLock { $0.lastFailure } }
    /// `MOVED` and `ASK` redirections followed since start, for tests.
    var redirectsFollowed: (moved: Int, ask: Int) { state.withLock { ($0.movedFollowed, $0.askFollowed) } }

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
    func execute(encoded command: [UInt8], slot: Int?, deadline: NIODeadline,
                 afterReply: AfterReply) async throws(RedisClientError) -> RESPReply {
        var follower = ClusterRedirectFollower(target: try await owner(of: slot, before: deadline), slot: slot)
        while true {
            let pool = state.withLock { self.pool(follower.target, &$0) }
            let step: ClusterRedirectFollower.Step
            do {
                step = follower.received(try await pool.send(encoded: command, deadline: deadline,
                                                              prelude: follower.asking ? Self.askingCommand : nil,
                                                              afterReply: afterReply))
            } catch {
                step = follower.failed(error)
            }
            switch step {
            case .answer(let reply, let refresh):
                if refresh { requestRefresh() }
                return reply
            case .follow(let movedSlot):
                if let movedSlot {
                    state.withLock { state in
                        state.moved[movedSlot] = follower.target
                        state.movedFollowed += 1
                    }
                    requestRefresh()
                } else {
                    state.withLock { $0.askFollowed += 1 }
                }
            case .fail(let error, let refresh):
                if refresh { requestRefresh() }
                throw error
            }
        }
    }

    static let askingCommand = RESPCommand("ASKING").encoded()

    /// The primary of `slot` (any primary for nil), reading the topology first when none is known.
    private func owner(of slot: Int?, before deadline: NIODeadline) async throws(RedisClientError) -> RedisNodeAddress {
        if state.withLock({ $0.isShutDown }) { throw RedisClientError(.shutDown, "the Redis client was shut down") }
        let known = state.withLock { state -> RedisNodeAddress?? in
            guard let topology = state.topology else { return .none }
            guard let slot else { return .some(topology.primaries.first) }
            return .some(state.moved[slot] ?? topology.primary(forSlot: slot))
        }
        let topology: ClusterTopology
        switch known {
        case .some(.some(let address)):
            return address
        case .some(.none):
            requestRefresh()
            throw RedisClientError(.connectionFailed, "no primary serves slot \(slot.map(String.init) ?? "?") now (a shard is down or migrating)")
        case .none:
            topology = try await self.topology(before: deadline)
        }
        let address = slot.map { topology.primary(forSlot: $0) } ?? topology.primaries.first
        guard let address else {
            throw RedisClientError(.connectionFailed, "no primary serves slot \(slot.map(String.init) ?? "?") now (a shard is down or migrating)")
        }
        return address
    }

    func topology(timeout: Duration) async throws(RedisClientError) -> ClusterTopology {
        try await topology(before: .now() + timeout.timeAmount)
    }

    /// The known topology, or the one a refresh reads by `deadline`.
    func topology(before deadline: NIODeadline) async throws(RedisClientError) -> ClusterTopology {
        let (known, running) = state.withLock { state -> (ClusterTopology?, EventLoopFuture<ClusterTopology>?) in
            if let topology = state.topology { return (topology, nil) }
            return (nil, startRefresh(&state))
        }
        if let known { return known }
        guard let running else { throw RedisClientError(.shutDown, "the Redis client was shut down") }
        return try await running.boundedValue(before: deadline, context: "cluster topology") { [self] in
            let why = self.state.withLock { $0.lastFailure }
            // The last attempt's code, as in Sentinel: an untrusted certificate
            // (tlsFailed) or a refused login is a setting to fix, not a wait.
            return RedisClientError(why?.code ?? .connectionFailed, "no cluster topology yet" + (why.map { ": \($0.message)" } ?? ""))
        }
    }

    /// Readiness: at least one primary answers `PING` by `deadline`.
    func pingAnyPrimary(deadline: NIODeadline) async throws(RedisClientError) {
        let topology = try await topology(before: deadline)
        let pools = state.withLock { state in topology.primaries.map { self.pool($0, &state) } }
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
            requestRefresh()
            let first = failures.first ?? RedisClientError(.connectionFailed, "no primary known")
            throw RedisClientError(first.code, "no primary of the cluster answers: " + failures.map(\.message).joined(separator: "; "))
        }
    }

    /// Asks for a refresh; one runs at a time, at most one per ``refreshInterval``.
    func requestRefresh() {
        state.withLock { state in
            if state.refresh != nil { state.refreshAgain = true } else { _ = startRefresh(&state) }
        }
    }

    private func startRefresh(_ state: inout State) -> EventLoopFuture<ClusterTopology>? {
        guard !state.isShutDown else { return nil }
        if let running = state.refresh { return running.futureResult }
        let promise = group.next().makePromise(of: ClusterTopology.self)
        state.refresh = promise
        state.refreshTask = Task { [self] in await self.refreshLoop(promise) }
        return promise.futureResult
    }

    /// Reads the topology until one read succeeds and nobody asked for another meanwhile.
    private func refreshLoop(_ promise: EventLoopPromise<ClusterTopology>) async {
        var completed = false
        while !Task.isCancelled {
            state.withLock { $0.refreshAgain = false }
            if let topology = await readTopology() {
                if !completed { promise.succeed(topology) }
                completed = true
            }
            try? await Task.sleep(nanoseconds: UInt64(Self.refreshInterval.nanoseconds))
            let again = state.withLock { state -> Bool in
                if completed, !state.refreshAgain || state.isShutDown {
                    state.refresh = nil
                    state.refreshTask = nil
                    return false
                }
                return !state.isShutDown
            }
            if !again { break }
        }
        if !completed { promise.fail(RedisClientError(.shutDown, "the Redis client was shut down")) }
    }

    /// Asks the known primaries, then the seeds, for `CLUSTER SHARDS` (or
    /// `CLUSTER SLOTS` where SHARDS is unknown); installs the first answer.
    private func readTopology() async -> ClusterTopology? {
        let candidates = state.withLock { state -> [(RedisNodeAddress, RedisNodePool)] in
            var addresses = (state.topology?.primaries ?? []).shuffled()
            for seed in seeds where !addresses.contains(seed) { addresses.append(seed) }
            return addresses.map { ($0, self.pool($0, &state)) }
        }
        for (address, pool) in candidates {
            let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
            do throws(RedisClientError) {
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
                        topology = try ClusterTopology(shardsReply: shards, askedHost: address.host,
                                                       tls: configuration.endpoint.usesTLS)
                    }
                } catch {
                    throw RedisClientError(.unexpectedReply, "\(address): \(error.message)")
                }
                guard topology.coveredSlotCount > 0 else {
                    throw RedisClientError(.unexpectedReply, "\(address) serves no slot (not part of a cluster yet?)")
                }
                install(topology)
                return topology
            } catch {
                state.withLock { $0.lastFailure = error }
            }
        }
        return nil
    }

    private func install(_ topology: ClusterTopology) {
        let retired = state.withLock { state -> [RedisNodePool] in
            state.topology = topology
            state.moved = [:]
            state.lastFailure = nil
            state.refreshes += 1
            // Pools of nodes that are neither primaries nor seeds go.
            let keep = Set(topology.primaries).union(seeds)
            let gone = state.pools.filter { !keep.contains($0.key) }
            for address in gone.keys { state.pools[address] = nil }
            return Array(gone.values)
        }
        if !retired.isEmpty {
            Task { for pool in retired { await pool.shutdown() } }
        }
    }

    func shutdown() async {
        let (pools, task) = state.withLock { state -> ([RedisNodePool], Task<Void, Never>?) in
            state.isShutDown = true
            let taken = (Array(state.pools.values), state.refreshTask)
            state.pools = [:]
            return taken
        }
        task?.cancel()
        await task?.value
        for pool in pools { await pool.shutdown() }
    }
}
