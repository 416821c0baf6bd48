import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// The Sentinel router's decisions (docs/DESIGN.md#state-machines-and-thin-handlers), deterministically:
/// events in, actions out, time given by hand. No socket, no sleeping.
@Suite("Redis: the Sentinel router's state machine")
struct SentinelRouterStateMachineTests {
    static let old = RedisNodeAddress(host: "10.0.0.1", port: 6379)!
    static let new = RedisNodeAddress(host: "10.0.0.2", port: 6379)!
    static let down = RedisNodeAddress(host: "10.0.0.9", port: 6379)!
    typealias Machine = SentinelRouterStateMachine
    static let ms: UInt64 = 1_000_000
    static let retry = 100 * ms
    static let watch = 250 * ms

    static func machine(sentinels: Int = 3) -> Machine {
        Machine(settings: .init(sentinelCount: sentinels, retryDelay: retry, watchInterval: watch))
    }

    static func refused(_ what: String) -> RedisClientError { RedisClientError(.connectionFailed, what) }

    /// A machine whose primary is `old`, confirmed through sentinel `sentinel` at `now`.
    static func confirmed(through sentinel: Int = 0, at now: UInt64 = 0) -> Machine {
        var machine = machine()
        #expect(machine.route(now: now) == .awaitPrimary(startDiscovery: true))
        for index in 0..<sentinel {
            #expect(machine.nextDiscoveryStep(now: now) == .ask(sentinel: index))
            machine.discoveryFailed(refused("sentinel \(index)"), now: now)
        }
        #expect(machine.nextDiscoveryStep(now: now) == .ask(sentinel: sentinel))
        machine.sentinelNamed(old, by: sentinel)
        #expect(machine.nextDiscoveryStep(now: now) == .confirm(old, namedBy: sentinel))
        _ = machine.primaryConfirmed(old, namedBy: sentinel, now: now)
        return machine
    }

    @Test func discoveryAsksTheSentinelsInTurnPastOneThatIsDown() {
        var machine = Self.machine()
        #expect(machine.runStarted() == nil, "no primary yet: the poll and the subscription wait for the first")
        #expect(machine.route(now: 0) == .awaitPrimary(startDiscovery: true))
        #expect(machine.route(now: 0) == .awaitPrimary(startDiscovery: false), "one discovery at a time")
        #expect(machine.nextDiscoveryStep(now: 0) == .ask(sentinel: 0))
        machine.discoveryFailed(Self.refused("sentinel 0 refused"), now: 1)
        #expect(machine.nextDiscoveryStep(now: 1) == .ask(sentinel: 1))
        machine.sentinelNamed(Self.old, by: 1)
        #expect(machine.nextDiscoveryStep(now: 2) == .confirm(Self.old, namedBy: 1), "a named node is confirmed before use")
        #expect(machine.route(now: 2) == .awaitPrimary(startDiscovery: false), "nothing is sent before ROLE says master")
        #expect(
            machine.primaryConfirmed(Self.old, namedBy: 1, now: 3) == .init(replaced: nil, startBackground: 1),
            "the first primary starts the poll and the subscription, at the sentinel that answered"
        )
        #expect(machine.route(now: 3) == .send(Self.old, startDiscovery: false))
        #expect(machine.preferredSentinel == 1 && machine.discoveries == 1 && machine.lastFailure == nil)
        #expect(machine.nextDiscoveryStep(now: 3) == .stop)
    }

    @Test func aNodeThatFailsItsRoleIsNeverSentARequest() {
        var machine = Self.machine(sentinels: 2)
        _ = machine.route(now: 0)
        #expect(machine.nextDiscoveryStep(now: 0) == .ask(sentinel: 0))
        machine.sentinelNamed(Self.down, by: 0)
        #expect(machine.nextDiscoveryStep(now: 0) == .confirm(Self.down, namedBy: 0))
        machine.discoveryFailed(RedisClientError(.unexpectedReply, "answers ROLE slave"), now: 1)
        #expect(machine.route(now: 1) == .awaitPrimary(startDiscovery: false))
        #expect(machine.nextDiscoveryStep(now: 1) == .ask(sentinel: 1))
        machine.discoveryFailed(Self.refused("sentinel 1 refused"), now: 2)
        // The round is over: the next one waits a retry delay.
        #expect(machine.nextDiscoveryStep(now: 2) == .sleep(until: 2 + Self.retry))
        #expect(machine.nextDiscoveryStep(now: 2 + Self.retry) == .ask(sentinel: 0))
        machine.sentinelNamed(Self.new, by: 0)
        #expect(machine.nextDiscoveryStep(now: 3 + Self.retry) == .confirm(Self.new, namedBy: 0))
        _ = machine.primaryConfirmed(Self.new, namedBy: 0, now: 4 + Self.retry)
        #expect(machine.route(now: 5 + Self.retry) == .send(Self.new, startDiscovery: false))
        #expect(machine.lastFailure == nil)
    }

    @Test func switchMasterMovesThePrimaryThroughADiscovery() {
        var machine = Self.confirmed(through: 0)
        #expect(machine.heard(.subscribed(sentinel: 0, again: false)) == false, "the first subscription asks nothing")
        #expect(machine.heard(.switchMaster(sentinel: 2)) == true)
        #expect(machine.heard(.switchMaster(sentinel: 2)) == false, "one discovery at a time")
        #expect(machine.route(now: 1) == .send(Self.old, startDiscovery: false), "the message's address is never written to")
        #expect(machine.nextDiscoveryStep(now: 1) == .ask(sentinel: 2), "the sentinel that spoke is asked first")
        machine.sentinelNamed(Self.new, by: 2)
        #expect(machine.nextDiscoveryStep(now: 2) == .confirm(Self.new, namedBy: 2))
        #expect(
            machine.primaryConfirmed(Self.new, namedBy: 2, now: 3) == .init(replaced: Self.old, startBackground: nil),
            "the old primary's pool goes"
        )
        #expect(machine.route(now: 3) == .send(Self.new, startDiscovery: false))
        #expect(machine.heard(.subscribed(sentinel: 1, again: true)) == true, "a subscription made again asks (a switch may have gone unheard)")
    }

    @Test func thePollAndTheSubscriptionRunOnlyWhileServiceRunRuns() {
        var machine = Self.confirmed(through: 2)
        #expect(machine.runStarted() == 2, "run() after the first primary starts them at once, at the sentinel that answered")
        #expect(machine.heard(.switchMaster(sentinel: 1)) == true)
        #expect(machine.nextDiscoveryStep(now: 1) == .ask(sentinel: 1))
        machine.sentinelNamed(Self.new, by: 1)
        #expect(machine.nextDiscoveryStep(now: 1) == .confirm(Self.new, namedBy: 1))
        #expect(machine.primaryConfirmed(Self.new, namedBy: 1, now: 2).startBackground == nil, "they run already")
        machine.runEnded()
        #expect(machine.runStarted() == 1, "run() again: started again, at the sentinel that answered last")
        machine.runEnded()
        #expect(machine.primaryInTrouble(Self.new) == true, "without run() a request's trouble still starts a discovery")
        #expect(machine.nextDiscoveryStep(now: 3) == .ask(sentinel: 1))
        machine.sentinelNamed(Self.old, by: 1)
        #expect(machine.nextDiscoveryStep(now: 3) == .confirm(Self.old, namedBy: 1))
        #expect(
            machine.primaryConfirmed(Self.old, namedBy: 1, now: 4) == .init(replaced: Self.new, startBackground: nil),
            "without run() no primary starts them"
        )
        machine.shutDown()
        #expect(machine.runStarted() == nil)
    }

    @Test func troubleOnTheOldPrimaryAfterAMoveStartsNothing() {
        var machine = Self.confirmed()
        #expect(machine.primaryInTrouble(Self.new) == false, "not the primary")
        #expect(machine.primaryInTrouble(Self.old) == true)
        #expect(machine.primaryInTrouble(Self.old) == false, "one discovery at a time")
    }

    @Test func aDiscoveryRunByACallerPausesAndIsResumedByARequest() {
        var machine = Self.machine(sentinels: 1)
        _ = machine.route(now: 0)
        #expect(machine.nextDiscoveryStep(now: 0) == .ask(sentinel: 0))
        machine.askAbandoned(.ask(sentinel: 0))
        #expect(!machine.isDiscovering)
        #expect(machine.route(now: 0) == .awaitPrimary(startDiscovery: true), "a waiting request resumes it")
        #expect(machine.nextDiscoveryStep(now: 0) == .ask(sentinel: 0), "the abandoned question is asked again")
        machine.sentinelNamed(Self.old, by: 0)
        #expect(machine.nextDiscoveryStep(now: 0) == .confirm(Self.old, namedBy: 0))
        _ = machine.primaryConfirmed(Self.old, namedBy: 0, now: 0)
        // Trouble, a failed round, a pause at the sleep: the first request after the delay resumes it.
        #expect(machine.primaryInTrouble(Self.old) == true)
        #expect(machine.nextDiscoveryStep(now: 10) == .ask(sentinel: 0))
        machine.discoveryFailed(Self.refused("down"), now: 10)
        #expect(machine.nextDiscoveryStep(now: 10) == .sleep(until: 10 + Self.retry))
        machine.discoveryPaused()
        #expect(machine.route(now: 20) == .send(Self.old, startDiscovery: false), "not before the retry delay")
        #expect(machine.route(now: 10 + Self.retry) == .send(Self.old, startDiscovery: true))
        #expect(machine.nextDiscoveryStep(now: 10 + Self.retry) == .ask(sentinel: 0))
    }

    @Test func thePollAsksEveryIntervalMovesOnPastASilentSentinelAndDiscoversOnAnotherName() {
        var machine = Self.confirmed(through: 1, at: 0)
        #expect(machine.nextWatchStep(now: 0) == .sleep(until: Self.watch))
        #expect(machine.nextWatchStep(now: Self.watch) == .ask(sentinel: 1), "the sentinel that answered last")
        machine.watchFailed()
        #expect(machine.nextWatchStep(now: Self.watch + 1) == .sleep(until: 2 * Self.watch))
        #expect(machine.nextWatchStep(now: 2 * Self.watch) == .ask(sentinel: 2), "then the next one")
        #expect(machine.watchAnswered(Self.old) == false, "the same node: nothing")
        #expect(machine.watchAnswered(nil) == false)
        #expect(machine.watchAnswered(Self.new) == true, "another node: a discovery, whose ROLE decides")
        #expect(machine.nextWatchStep(now: 3 * Self.watch) == .sleep(until: 4 * Self.watch), "no question while a discovery runs")
    }

    @Test func shutdownFailsRequestsAndStopsEverything() {
        var machine = Self.confirmed()
        _ = machine.primaryInTrouble(Self.old)
        machine.shutDown()
        #expect(machine.route(now: 0) == .fail(RedisClientError(.shutDown, "")))
        #expect(machine.nextDiscoveryStep(now: 0) == .stop)
        #expect(machine.nextWatchStep(now: 10 * Self.watch) == .stop)
        #expect(machine.heard(.switchMaster(sentinel: 0)) == false)
        #expect(machine.startDiscovery() == false)
    }
}

extension SentinelRouterStateMachineTests {
    /// A caller that carries the discovery after its answer never sleeps: it stops, and the discovery stays owed.
    @Test func aCallerThatMayNotWaitStopsAtTheRetryDelay() {
        var machine = Self.confirmed()
        #expect(machine.primaryInTrouble(Self.old) == true)
        for index in 0..<3 {
            #expect(machine.nextDiscoveryStep(now: 5, mayWait: false) == .ask(sentinel: index))
            machine.discoveryFailed(Self.refused("down"), now: 5)
        }
        #expect(machine.nextDiscoveryStep(now: 5, mayWait: false) == .stop)
        #expect(!machine.isDiscovering)
        #expect(machine.route(now: 5 + Self.retry) == .send(Self.old, startDiscovery: true))
        #expect(machine.nextDiscoveryStep(now: 5 + Self.retry) == .ask(sentinel: 0))
    }
}
