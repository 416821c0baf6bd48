/// Every decision of one node's pool, with no I/O and no NIO
/// (docs/DESIGN.md#state-machines-and-thin-handlers): which connection a request goes on, when one is
/// opened, how long a failed one waits, what a lost one does. ``RedisNodePool``
/// feeds it events (a request, a connect that succeeded or failed, a
/// connection that closed) with the time as nanoseconds on a monotonic clock
/// and carries out what it answers. `Connection` is a connection (a
/// `RedisConnection` in the pool, a plain object in tests); `Opening` is what
/// requests wait on while one opens (a future in the pool).
///
/// **Bounded.** A fixed number of slots, one connection each: never more
/// connections than that, however many requests come. Requests go round
/// robin over the open ones; one whose `WAIT` holds its requests only when no
/// other is open and none can be opened. A request finding none open waits on
/// one being opened (its own deadline bounds the wait, the client's
/// outstanding budget bounds how many wait), or, while every slot waits out
/// its backoff, fails at once.
///
/// **Whole.** Once a connect succeeds, every other free slot is opened too
/// (``slotsToFill(now:)``), so the pool is whole before requests need it: at start-up,
/// after a failover, after Redis came back. A first burst of requests then
/// finds its connections open rather than waiting on connects.
///
/// **Backoff.** A failed connect leaves its slot waiting initial ×
/// 2^(failures−1), capped, jittered to 50–100 % so a fleet that lost Redis
/// together does not come back in step. A connection that closes leaves its
/// slot free: the next request opens a new one at once.
///
/// **Suspension** (Sentinel): once asked, a lost connection suspends the pool,
/// since the address may now be an empty, restarted server that calls itself
/// primary; only confirming requests (`ROLE`) get through until ``resume()``.
struct RedisNodePoolStateMachine<Connection: AnyObject, Opening> {
    struct Settings {
        var connections: Int
        /// Nanoseconds.
        var initialReconnectDelay: UInt64
        var maximumReconnectDelay: UInt64
        var endpointDescription: String
    }

    enum Pick {
        case ready(Connection)
        /// Wait for this connection being opened.
        case wait(Opening)
        /// Connect for `slot`, then report it with ``opening(_:slot:)`` at once, and wait.
        case open(slot: Int)
        case fail(RedisClientError)
    }

    private enum Slot {
        case closed
        case opening(Opening, attempt: UInt64)
        case open(Connection)
        /// The last attempt failed; the next may start at `retryAt`.
        case waiting(retryAt: UInt64, failure: RedisClientError)
    }

    let settings: Settings
    private var slots: [Slot]
    private var consecutiveFailures: [Int]
    private var nextSlot = 0
    private var attempts: UInt64 = 0
    private(set) var isShutDown = false
    private(set) var isSuspended = false
    /// Whether a lost connection suspends the pool.
    var suspendsOnLoss = false

    init(settings: Settings) {
        precondition(settings.connections > 0, "a pool needs a connection")
        self.settings = settings
        slots = Array(repeating: .closed, count: settings.connections)
        consecutiveFailures = Array(repeating: 0, count: settings.connections)
    }

    /// Connections open now (for tests).
    var openCount: Int { slots.filter { if case .open = $0 { true } else { false } }.count }

    /// Where a request goes at `now`; `confirming`: it checks the node's role (gets through a suspension).
    /// `isHolding`: whether a connection's `WAIT` holds its requests now.
    mutating func pick(now: UInt64, confirming: Bool, isHolding: (Connection) -> Bool) -> Pick {
        if isShutDown { return .fail(RedisClientError(.shutDown, "the Redis client was shut down")) }
        if isSuspended, !confirming {
            return .fail(
                RedisClientError(
                    .connectionClosed,
                    "the connection to \(settings.endpointDescription) was lost; its role is being confirmed"
                )
            )
        }
        let count = slots.count
        var opening: Opening?
        var toOpen: Int?
        var lastFailure: RedisClientError?
        var soonestRetry: UInt64?
        var holding: Connection?
        for step in 0..<count {
            let index = (nextSlot + step) % count
            switch slots[index] {
            case .open(let connection):
                if isHolding(connection) {
                    holding = holding ?? connection
                    continue
                }
                nextSlot = (index + 1) % count
                return .ready(connection)
            case .opening(let future, _):
                if toOpen == nil { opening = opening ?? future }
            case .closed:
                if opening == nil, toOpen == nil { toOpen = index }
            case .waiting(let retryAt, let failure):
                if retryAt <= now {
                    if opening == nil, toOpen == nil { toOpen = index }
                } else {
                    lastFailure = failure
                    soonestRetry = min(soonestRetry ?? retryAt, retryAt)
                }
            }
        }
        // Whichever came first in turn: a connection being opened, or a free slot to open;
        // only then one whose WAIT holds the requests behind it.
        if let opening { return .wait(opening) }
        if let toOpen { return .open(slot: toOpen) }
        if let holding { return .ready(holding) }
        let retryIn = soonestRetry.map { ($0 - now) / 1_000_000 } ?? 0
        let failure = lastFailure ?? RedisClientError(.connectionFailed, "no connection to \(settings.endpointDescription)")
        return .fail(RedisClientError(failure.code, "\(failure.message) (next attempt in \(retryIn) ms)"))
    }

    /// The connect for `slot` that ``pick(now:confirming:isHolding:)`` asked for started;
    /// requests wait on `opening`. Returns the attempt, to report its outcome with.
    mutating func opening(_ opening: Opening, slot: Int) -> UInt64 {
        attempts += 1
        slots[slot] = .opening(opening, attempt: attempts)
        return attempts
    }

    /// The connect `attempt` for `slot` succeeded. False: it is stale (shut
    /// down meanwhile): close `connection`.
    mutating func opened(_ connection: Connection, slot: Int, attempt: UInt64) -> Bool {
        guard !isShutDown, case .opening(_, let current) = slots[slot], current == attempt else { return false }
        slots[slot] = .open(connection)
        consecutiveFailures[slot] = 0
        return true
    }

    /// After a connect succeeded: the free slots (closed, or past their backoff at
    /// `now`) to open now, each to be reported with ``opening(_:slot:)`` at once.
    func slotsToFill(now: UInt64) -> [Int] {
        guard !isShutDown else { return [] }
        return slots.indices.filter { index in
            switch slots[index] {
            case .closed: true
            case .waiting(let retryAt, _): retryAt <= now
            case .opening, .open: false
            }
        }
    }

    /// The connect `attempt` for `slot` failed at `now`; `jitter` in 0…1 picks
    /// where in 50–100 % of the backoff the retry falls.
    mutating func openFailed(_ failure: RedisClientError, slot: Int, attempt: UInt64, now: UInt64, jitter: Double) {
        guard !isShutDown, case .opening(_, let current) = slots[slot], current == attempt else { return }
        consecutiveFailures[slot] += 1
        slots[slot] = .waiting(
            retryAt: now &+ reconnectDelay(afterFailures: consecutiveFailures[slot], jitter: jitter),
            failure: failure
        )
    }

    /// `connection` in `slot` closed: the slot is free for the next request.
    /// True: the pool is suspended now, tell its owner.
    mutating func closed(_ connection: Connection, slot: Int) -> Bool {
        guard case .open(let current) = slots[slot], current === connection else { return false }
        slots[slot] = .closed
        guard !isShutDown, suspendsOnLoss else { return false }
        isSuspended = true
        return true
    }

    /// The owner confirmed the node's role: requests flow again.
    mutating func resume() {
        isSuspended = false
    }

    /// Shut down: every request fails from now on. Returns the open connections, to close.
    mutating func shutDown() -> [Connection] {
        isShutDown = true
        let open = slots.compactMap { slot -> Connection? in
            if case .open(let connection) = slot { return connection }
            return nil
        }
        slots = Array(repeating: .closed, count: slots.count)
        return open
    }

    /// Nanoseconds: initial × 2^(failures−1), capped, then 50–100 % of it by `jitter`.
    func reconnectDelay(afterFailures failures: Int, jitter: Double) -> UInt64 {
        let initial = settings.initialReconnectDelay
        let maximum = settings.maximumReconnectDelay
        let exponent = UInt64(min(max(failures - 1, 0), 30))
        let (scaled, overflow) = initial.multipliedReportingOverflow(by: UInt64(1) << exponent)
        let delay = overflow ? maximum : min(maximum, scaled)
        return delay / 2 + UInt64(Double(delay / 2) * min(max(jitter, 0), 1))
    }
}
