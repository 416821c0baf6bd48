internal import RedisRESP

/// Every decision of the Cluster router, with no I/O and no NIO
/// (docs/DESIGN.md#state-machines-and-thin-handlers): where a request goes, when the topology is
/// read again, what a read installs, which pools go. ``ClusterRouter`` feeds
/// it events (a request, a redirection, a node failure, a topology read that
/// succeeded or failed, the refresher waking) with the time as nanoseconds on
/// a monotonic clock, and carries out what it answers. The per-request
/// redirections are ``ClusterRedirectFollower``'s.
///
/// **The refresher.** One reader of the topology at a time: the first request
/// for a refresh starts it (``requestRefresh(now:)`` answers true), and it
/// asks ``nextRefreshStep(now:)`` what to do until it is told to stop. Reads
/// start at most once per ``Settings/refreshInterval`` after the last one
/// ended, however many requests ask; a request that asks while a read runs
/// gets one more read after it. A failed read keeps the map it had. It is
/// tried again each interval: until one succeeds while no map is known
/// (requests wait for one), at most ``Settings/maxFailedReads`` times in a
/// row once one is (the next request that meets trouble asks again).
///
/// **Who runs the refresher.** The client's `Service.run()` while it runs;
/// otherwise the call that asked for it, within that call's deadline and
/// without sleeping: such a run ends at a ``RefreshStep/sleep(until:)`` or
/// at the deadline (``refresherPaused()``, ``readAbandoned()``), and the
/// work it leaves is owed, so the first request routed once the interval
/// has passed starts the refresher again (``Route/send(_:startRefresher:)``).
struct ClusterRouterStateMachine {
    struct Settings {
        /// Nanoseconds from the end of one read to the start of the next.
        var refreshInterval: UInt64
        /// Failed reads in a row after which, with a map known, the refresher gives up.
        var maxFailedReads: Int
    }

    /// What a request does next.
    enum Route: Equatable {
        /// Send to the primary at this address; `startRefresher`: a refresh
        /// left owed by a paused refresher is due, start it.
        case send(RedisNodeAddress, startRefresher: Bool)
        /// No map is known: wait for the refresher's read (started now when `startRefresher`).
        case awaitTopology(startRefresher: Bool)
        case fail(RedisClientError, startRefresher: Bool)

        static func == (lhs: Route, rhs: Route) -> Bool {
            switch (lhs, rhs) {
            case let (.send(a, r), .send(b, s)): a == b && r == s
            case let (.awaitTopology(a), .awaitTopology(b)): a == b
            case let (.fail(a, r), .fail(b, s)): a.code == b.code && r == s
            default: false
            }
        }
    }

    /// What the refresher does next.
    enum RefreshStep: Equatable {
        /// Ask these nodes in turn for the topology; report the first answer or the last failure.
        case read([RedisNodeAddress])
        /// Nothing before this instant; ask again then.
        case sleep(until: UInt64)
        case stop
    }

    let settings: Settings
    let seeds: [RedisNodeAddress]
    private(set) var topology: ClusterTopology?
    /// Slots a `MOVED` sent elsewhere since the last read.
    private var moved: [Int: RedisNodeAddress] = [:]
    /// Nodes with a pool: what a new map may retire.
    private(set) var pooled: Set<RedisNodeAddress> = []
    private var refresher = Refresher.idle(owed: false)
    /// When the last read ended; the next starts an interval later.
    private var lastReadEnded: UInt64?
    private var failedReadsInRow = 0
    private(set) var lastFailure: RedisClientError?
    private(set) var isShutDown = false
    private(set) var reads = 0
    private(set) var movedFollowed = 0
    private(set) var askFollowed = 0

    private enum Refresher: Equatable {
        /// Not running; `owed`: a paused run left a read to do.
        case idle(owed: Bool)
        /// Running; `pending`: a read is owed (asked for since the last one started).
        case active(pending: Bool)
    }

    init(settings: Settings, seeds: [RedisNodeAddress]) {
        self.settings = settings
        self.seeds = seeds
    }

    /// Whether the refresher runs now (for tests).
    var isRefreshing: Bool {
        if case .active = refresher { true } else { false }
    }

    // MARK: Requests

    /// Where a request for `slot` (any primary for nil) goes at `now`.
    mutating func route(slot: Int?, now: UInt64) -> Route {
        if isShutDown { return .fail(Self.shutDownError, startRefresher: false) }
        guard let topology else { return .awaitTopology(startRefresher: requestRefresh()) }
        let address = slot.map { moved[$0] ?? topology.primary(forSlot: $0) } ?? topology.primaries.first
        guard let address else {
            return .fail(
                RedisClientError(
                    .connectionFailed,
                    "no primary serves slot \(slot.map(String.init) ?? "?") now (a shard is down or migrating)"
                ),
                startRefresher: requestRefresh()
            )
        }
        pooled.insert(address)
        var owedIsDue = false
        if case .idle(owed: true) = refresher, now >= (lastReadEnded.map { $0 &+ settings.refreshInterval } ?? 0) {
            refresher = .active(pending: true)
            owedIsDue = true
        }
        return .send(address, startRefresher: owedIsDue)
    }

    /// A request follows a redirection to `target`: for `MOVED` (`movedSlot`
    /// set) the slot lives there from now on, for every request, and the map
    /// is read again; for `ASK` only this request goes there, the map unchanged.
    /// True: start the refresher.
    mutating func redirected(movedSlot: Int?, to target: RedisNodeAddress) -> Bool {
        guard !isShutDown else { return false }
        pooled.insert(target)
        guard let movedSlot else {
            askFollowed += 1
            return false
        }
        moved[movedSlot] = target
        movedFollowed += 1
        return requestRefresh()
    }

    /// The primaries whose pools readiness pings (made now if new); none once
    /// shut down, when a pool made now would outlive the client.
    mutating func primariesToPing() -> [RedisNodeAddress] {
        guard !isShutDown else { return [] }
        let primaries = topology?.primaries ?? []
        pooled.formUnion(primaries)
        return primaries
    }

    // MARK: The refresher

    /// Something says the map may be stale (a redirection, a node that
    /// failed, a cluster-state error reply). True: start the refresher, which
    /// then asks ``nextRefreshStep(now:)``; false: it runs already (and owes a read now) or the router is shut down.
    mutating func requestRefresh() -> Bool {
        guard !isShutDown else { return false }
        switch refresher {
        case .idle:
            refresher = .active(pending: true)
            return true
        case .active:
            refresher = .active(pending: true)
            return false
        }
    }

    /// What the refresher does at `now`; unless it `mayWait` (a caller that
    /// carries it after its answer), a sleep pauses it instead (``refresherPaused()``) and it stops.
    mutating func nextRefreshStep(now: UInt64, mayWait: Bool = true) -> RefreshStep {
        guard !isShutDown, case .active(pending: true) = refresher else {
            refresher = .idle(owed: false)
            return .stop
        }
        if let lastReadEnded {
            let notBefore = lastReadEnded &+ settings.refreshInterval
            if now < notBefore {
                guard mayWait else {
                    refresherPaused()
                    return .stop
                }
                return .sleep(until: notBefore)
            }
        }
        refresher = .active(pending: false)
        // The known primaries first, starting one further each read so one
        // slow node is not asked every time, then the seeds.
        var candidates = topology?.primaries ?? []
        if !candidates.isEmpty {
            let start = reads % candidates.count
            candidates = Array(candidates[start...] + candidates[..<start])
        }
        for seed in seeds where !candidates.contains(seed) { candidates.append(seed) }
        pooled.formUnion(candidates)
        return .read(candidates)
    }

    /// A read answered `topology` at `now`: it replaces the map and the
    /// `MOVED` slots. Returns the nodes whose pools go (neither a primary nor a seed).
    mutating func readSucceeded(_ topology: ClusterTopology, now: UInt64) -> [RedisNodeAddress] {
        lastReadEnded = now
        guard !isShutDown else { return [] }
        self.topology = topology
        moved = [:]
        lastFailure = nil
        failedReadsInRow = 0
        reads += 1
        let keep = Set(topology.primaries).union(seeds)
        let retired = pooled.subtracting(keep)
        pooled.formIntersection(keep)
        return retired.sorted()
    }

    /// A read failed at `now` (no node answered): the map stays; the read is
    /// owed again while no map is known, or fewer than ``Settings/maxFailedReads`` failed in a row.
    mutating func readFailed(_ error: RedisClientError, now: UInt64) {
        lastReadEnded = now
        lastFailure = error
        failedReadsInRow += 1
        guard !isShutDown else { return }
        if topology == nil || failedReadsInRow < settings.maxFailedReads {
            refresher = .active(pending: true)
        }
    }

    /// A refresher run by a caller stops short (at a sleep, or at the
    /// caller's deadline between steps): what it still owed is owed.
    mutating func refresherPaused() {
        guard case .active(let pending) = refresher else { return }
        refresher = .idle(owed: pending && !isShutDown)
    }

    /// A read was cancelled with the caller that ran it (its deadline): it
    /// counts as no read, and is owed.
    mutating func readAbandoned() {
        refresher = .idle(owed: !isShutDown)
    }

    /// Shut down: every request fails from now on, the refresher stops at
    /// its next step, and every pool goes (returned).
    mutating func shutDown() -> [RedisNodeAddress] {
        isShutDown = true
        let pools = pooled.sorted()
        pooled = []
        return pools
    }

    static let shutDownError = RedisClientError(.shutDown, "the Redis client was shut down")
}
