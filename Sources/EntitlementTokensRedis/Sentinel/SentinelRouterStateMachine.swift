internal import RedisRESP

/// Every decision of the Sentinel router, with no I/O and no NIO
/// (docs/DESIGN.md#state-machines-and-thin-handlers): where a request goes, which sentinel is asked next,
/// when a named node counts as the primary, when the fallback poll asks,
/// when the subscription starts. ``SentinelRouter`` feeds it events (a
/// request, a sentinel's answer or failure, a node's `ROLE`, trouble on the
/// primary, a subscription notice, the poll's answer) with the time as
/// nanoseconds on a monotonic clock, and carries out what it answers.
///
/// **Discovery.** One at a time. It asks the sentinels in turn, from the one
/// that answered last; a named node is written to only after it answers
/// `ROLE` `master` (``DiscoveryStep/confirm(_:namedBy:)``). A round in which
/// no sentinel named a confirmed primary waits ``Settings/retryDelay`` and
/// starts again, until one does. A node that failed its confirmation is never
/// sent a request: only a confirmed address is routed to.
///
/// **Who runs it.** As for the Cluster refresher: the client's `Service.run()`
/// while it runs; otherwise the call that needs it, within its deadline
/// (``discoveryPaused()``, ``askAbandoned()``); what it leaves is owed, and
/// the first request routed after the retry delay starts it again. The
/// fallback poll and the subscription run only in `Service.run()`: they
/// start when it starts (or with the first primary, if none is known yet)
/// and end with it (``runStarted()``, ``runEnded()``).
struct SentinelRouterStateMachine {
    struct Settings {
        var sentinelCount: Int
        /// Nanoseconds between rounds of a discovery that found no primary.
        var retryDelay: UInt64
        /// Nanoseconds between the fallback poll's questions.
        var watchInterval: UInt64
    }

    enum Route: Equatable {
        /// Send to the confirmed primary; `startDiscovery`: a discovery left owed is due, run it.
        case send(RedisNodeAddress, startDiscovery: Bool)
        /// No primary is known: wait for the discovery (started now when `startDiscovery`).
        case awaitPrimary(startDiscovery: Bool)
        case fail(RedisClientError)

        static func == (lhs: Route, rhs: Route) -> Bool {
            switch (lhs, rhs) {
            case let (.send(a, r), .send(b, s)): a == b && r == s
            case let (.awaitPrimary(a), .awaitPrimary(b)): a == b
            case let (.fail(a), .fail(b)): a.code == b.code
            default: false
            }
        }
    }

    enum DiscoveryStep: Equatable {
        /// Ask sentinel `index` whom it names (`SENTINEL get-master-addr-by-name`).
        case ask(sentinel: Int)
        /// Ask the node a sentinel named for its `ROLE`.
        case confirm(RedisNodeAddress, namedBy: Int)
        case sleep(until: UInt64)
        case stop
    }

    /// What a confirmed primary changes.
    struct Confirmed: Equatable {
        /// The primary it replaces (its pool goes); nil when the same node stays.
        var replaced: RedisNodeAddress?
        /// The first primary while `Service.run()` runs: start the fallback poll and the subscription, from this sentinel.
        var startBackground: Int?
    }

    enum WatchStep: Equatable {
        /// Ask sentinel `index` whom it names now.
        case ask(sentinel: Int)
        case sleep(until: UInt64)
        case stop
    }

    var settings: Settings
    private(set) var primary: RedisNodeAddress?
    private var discovery = Discovery.idle
    /// The sentinel that answered last: asked first next time.
    private(set) var preferredSentinel = 0
    private(set) var lastFailure: RedisClientError?
    private(set) var isShutDown = false
    private(set) var discoveries = 0
    /// Whether the client's `Service.run()` runs: the only home of the poll and the subscription.
    private var runs = false
    private var backgroundStarted = false
    /// The poll's next question: how many sentinels past the preferred one, and not before when.
    private var watchSkip = 0
    private var watchDue: UInt64 = 0

    private enum Discovery: Equatable {
        case idle
        case running(Round)
        /// A run by a caller stopped short: owed, resumed where it stopped.
        case paused(Round)
    }

    private struct Round: Equatable {
        var start: Int
        /// Sentinels of this round asked so far.
        var asked = 0
        /// A node named, to be confirmed next.
        var named: (address: RedisNodeAddress, sentinel: Int)?
        /// When the round's last question failed: the next round starts a retry delay later.
        var endedAt: UInt64?

        static func == (lhs: Round, rhs: Round) -> Bool {
            lhs.start == rhs.start && lhs.asked == rhs.asked && lhs.named?.address == rhs.named?.address
                && lhs.named?.sentinel == rhs.named?.sentinel && lhs.endedAt == rhs.endedAt
        }
    }

    init(settings: Settings) {
        precondition(settings.sentinelCount > 0, "Sentinel needs sentinels")
        self.settings = settings
    }

    /// Whether a discovery runs now (for tests).
    var isDiscovering: Bool {
        if case .running = discovery { true } else { false }
    }

    // MARK: Requests

    /// Where a request goes at `now`.
    mutating func route(now: UInt64) -> Route {
        if isShutDown { return .fail(Self.shutDownError) }
        guard let primary else { return .awaitPrimary(startDiscovery: startDiscovery()) }
        var owedIsDue = false
        if case .paused(let round) = discovery, now >= round.endedAt.map({ $0 &+ settings.retryDelay }) ?? 0 {
            discovery = .running(round)
            owedIsDue = true
        }
        return .send(primary, startDiscovery: owedIsDue)
    }

    /// A request to `address` met what says it may no longer be the primary
    /// (`READONLY`, `NOREPLICAS`, a closed, refused or timed-out connection,
    /// a lost connection): discover again, unless `address` is not the
    /// primary any more. True: start the discovery.
    mutating func primaryInTrouble(_ address: RedisNodeAddress) -> Bool {
        guard primary == address else { return false }
        return startDiscovery()
    }

    /// A subscription notice: `+switch-master` from sentinel `index`, or a
    /// subscription made again after one was lost (a switch in the gap went
    /// unheard) — ask that sentinel first, in a discovery. True: start it.
    mutating func heard(_ notice: SentinelSubscriber.Notice) -> Bool {
        switch notice {
        case .switchMaster(let index), .subscribed(let index, again: true):
            guard !isShutDown else { return false }
            preferredSentinel = index
            return startDiscovery()
        case .subscribed(_, again: false):
            return false  // the first subscription follows a discovery that just confirmed a primary
        }
    }

    // MARK: Discovery

    /// True: start the discovery (none ran); false: one runs, or shut down.
    mutating func startDiscovery() -> Bool {
        guard !isShutDown else { return false }
        switch discovery {
        case .running:
            return false
        case .paused(let round):
            discovery = .running(round)
        case .idle:
            discovery = .running(Round(start: preferredSentinel))
        }
        return true
    }

    /// What the discovery does at `now`; unless it `mayWait` (a caller that
    /// carries it after its answer), a sleep pauses it instead (``discoveryPaused()``) and it stops.
    mutating func nextDiscoveryStep(now: UInt64, mayWait: Bool = true) -> DiscoveryStep {
        guard !isShutDown, case .running(var round) = discovery else {
            if isShutDown { discovery = .idle }
            return .stop
        }
        defer { if case .running = discovery { discovery = .running(round) } }
        if let named = round.named {
            round.named = nil
            return .confirm(named.address, namedBy: named.sentinel)
        }
        if round.asked < settings.sentinelCount {
            let index = (round.start + round.asked) % settings.sentinelCount
            round.asked += 1
            return .ask(sentinel: index)
        }
        let next = (round.endedAt ?? now) &+ settings.retryDelay
        round.endedAt = round.endedAt ?? now
        if now < next {
            guard mayWait else {
                discovery = .paused(round)
                return .stop
            }
            return .sleep(until: next)
        }
        round = Round(start: preferredSentinel)
        round.asked = 1
        return .ask(sentinel: round.start)
    }

    /// Sentinel `index` named `address` as the primary: confirm it next.
    mutating func sentinelNamed(_ address: RedisNodeAddress, by index: Int) {
        guard case .running(var round) = discovery else { return }
        round.named = (address, index)
        discovery = .running(round)
    }

    /// Sentinel `index` did not answer, or knows no such primary, or its named node refused (`ROLE`).
    mutating func discoveryFailed(_ error: RedisClientError, now: UInt64) {
        lastFailure = error
        guard case .running(var round) = discovery else { return }
        if round.asked >= settings.sentinelCount { round.endedAt = now }
        discovery = .running(round)
    }

    /// `address`, named by sentinel `index`, answered `ROLE` `master`: it is the primary.
    mutating func primaryConfirmed(_ address: RedisNodeAddress, namedBy index: Int, now: UInt64) -> Confirmed {
        guard !isShutDown else { return Confirmed(replaced: nil, startBackground: nil) }
        let old = primary
        primary = address
        preferredSentinel = index
        discovery = .idle
        lastFailure = nil
        discoveries += 1
        watchSkip = 0
        watchDue = now &+ settings.watchInterval
        var confirmed = Confirmed(replaced: old == address ? nil : old, startBackground: nil)
        if runs, !backgroundStarted {
            backgroundStarted = true
            confirmed.startBackground = index
        }
        return confirmed
    }

    /// A discovery run by a caller stops short (at a sleep, or at the
    /// caller's deadline between steps): it is owed, and the next request starts it again.
    mutating func discoveryPaused() {
        guard case .running(let round) = discovery else { return }
        discovery = isShutDown ? .idle : .paused(round)
    }

    /// A question was cancelled with the caller that ran the discovery: it
    /// counts as none (asked again on resuming), and the discovery is owed.
    mutating func askAbandoned(_ step: DiscoveryStep) {
        guard case .running(var round) = discovery else { return }
        switch step {
        case .ask: round.asked -= 1
        case .confirm(let address, let index): round.named = (address, index)
        case .sleep, .stop: break
        }
        discovery = .running(round)
        discoveryPaused()
    }

    // MARK: Service.run()

    /// The client's `Service.run()` started: start the poll and the
    /// subscription now, from the sentinel that answered last, when a primary
    /// is known (nil: with the first primary, ``Confirmed/startBackground``).
    mutating func runStarted() -> Int? {
        guard !isShutDown else { return nil }
        runs = true
        guard primary != nil, !backgroundStarted else { return nil }
        backgroundStarted = true
        return preferredSentinel
    }

    /// `Service.run()` ended, and the poll and the subscription with it.
    /// Requests still find a moved primary by its trouble, only later.
    mutating func runEnded() {
        runs = false
        backgroundStarted = false
    }

    // MARK: The fallback poll

    /// What the poll does at `now`: while a primary is known and no
    /// discovery runs, ask the sentinel that answered last (or, after it
    /// failed to answer, the next ones in turn) whom it names.
    mutating func nextWatchStep(now: UInt64) -> WatchStep {
        if isShutDown { return .stop }
        if now < watchDue { return .sleep(until: watchDue) }
        watchDue = now &+ settings.watchInterval
        guard primary != nil, discovery == .idle else { return .sleep(until: watchDue) }
        return .ask(sentinel: (preferredSentinel + watchSkip) % settings.sentinelCount)
    }

    /// The poll's sentinel named `address` (nil: no such primary): another
    /// node than the primary starts a discovery (true), whose `ROLE` decides.
    mutating func watchAnswered(_ address: RedisNodeAddress?) -> Bool {
        guard let address, let primary, address != primary else { return false }
        return startDiscovery()
    }

    /// The poll's sentinel did not answer: the next one is asked next time.
    /// It changes nothing else (requests find out for themselves whether the primary takes writes).
    mutating func watchFailed() {
        watchSkip = (watchSkip + 1) % settings.sentinelCount
    }

    /// Shut down: every request fails from now on; discovery and poll stop at their next step.
    mutating func shutDown() {
        isShutDown = true
        primary = nil
    }

    static let shutDownError = RedisClientError(.shutDown, "the Redis client was shut down")
}
