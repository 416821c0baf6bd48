import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// The Cluster router's decisions (docs/DESIGN.md#state-machines-and-thin-handlers), deterministically:
/// events in, actions out, time given by hand. No socket, no sleeping.
@Suite("Redis: the Cluster router's state machine")
struct ClusterRouterStateMachineTests {
    typealias Machine = ClusterRouterStateMachine
    static let ms: UInt64 = 1_000_000
    static let interval = 100 * ms
    static let a = RedisNodeAddress(host: "10.0.0.1", port: 7000)!
    static let b = RedisNodeAddress(host: "10.0.0.2", port: 7000)!
    static let c = RedisNodeAddress(host: "10.0.0.3", port: 7000)!
    static let seed = RedisNodeAddress(host: "seed.example", port: 7000)!

    static func machine(maxFailedReads: Int = 3) -> Machine {
        Machine(settings: .init(refreshInterval: interval, maxFailedReads: maxFailedReads), seeds: [seed])
    }

    /// a owns 0…8191, b 8192…16383.
    static let twoShards = try! ClusterTopology(ranges: [(0...8191, a), (8192...16383, b)])
    /// c took 8192…16383 over from b.
    static let cTookOver = try! ClusterTopology(ranges: [(0...8191, a), (8192...16383, c)])

    /// A machine that read `twoShards` at `now`.
    static func installed(at now: UInt64 = 0, maxFailedReads: Int = 3) -> Machine {
        var machine = machine(maxFailedReads: maxFailedReads)
        #expect(machine.route(slot: 1, now: 0) == .awaitTopology(startRefresher: true))
        #expect(machine.nextRefreshStep(now: now) == .read([seed]))
        #expect(machine.readSucceeded(twoShards, now: now) == [])
        #expect(machine.nextRefreshStep(now: now) == .stop)
        return machine
    }

    @Test func noMapYetStartsOneRefresherAndRequestsWait() {
        var machine = Self.machine()
        #expect(machine.route(slot: 5, now: 0) == .awaitTopology(startRefresher: true))
        #expect(machine.route(slot: 9000, now: 0) == .awaitTopology(startRefresher: false), "one refresher at a time")
        #expect(machine.nextRefreshStep(now: 0) == .read([Self.seed]))
        #expect(machine.nextRefreshStep(now: 0) == .stop, "nothing asked for since the read started")
        #expect(machine.isRefreshing == false)
    }

    @Test func theSlotMapRoutesEachSlotToItsPrimary() {
        var machine = Self.installed()
        #expect(machine.route(slot: 0, now: 0) == .send(Self.a, startRefresher: false))
        #expect(machine.route(slot: 8191, now: 0) == .send(Self.a, startRefresher: false))
        #expect(machine.route(slot: 8192, now: 0) == .send(Self.b, startRefresher: false))
        #expect(machine.route(slot: 16383, now: 0) == .send(Self.b, startRefresher: false))
        #expect(machine.route(slot: nil, now: 0) == .send(Self.a, startRefresher: false), "a keyless command goes to some primary")
        #expect(!machine.isRefreshing, "routing by a known map reads nothing")
    }

    @Test func aSlotWithNoPrimaryFailsAndAsksForARead() throws {
        var machine = Self.machine()
        _ = machine.route(slot: 1, now: 0)
        _ = machine.nextRefreshStep(now: 0)
        _ = machine.readSucceeded(try ClusterTopology(ranges: [(0...8191, Self.a)]), now: 0)
        _ = machine.nextRefreshStep(now: 0)
        #expect(machine.route(slot: 9000, now: 0) == .fail(RedisClientError(.connectionFailed, ""), startRefresher: true))
        #expect(machine.route(slot: 1, now: 0) == .send(Self.a, startRefresher: false), "the other shard's slots are served meanwhile")
    }

    @Test func movedUpdatesTheMapAtOnceAndSchedulesARead() {
        var machine = Self.installed(at: 10 * Self.ms)
        #expect(machine.redirected(movedSlot: 9000, to: Self.c) == true)
        #expect(machine.route(slot: 9000, now: 0) == .send(Self.c, startRefresher: false), "every later request goes to the new owner")
        #expect(machine.route(slot: 9001, now: 0) == .send(Self.b, startRefresher: false), "only the moved slot")
        // At most one read per interval after the last one ended.
        #expect(machine.nextRefreshStep(now: 20 * Self.ms) == .sleep(until: 110 * Self.ms))
        #expect(machine.redirected(movedSlot: 9001, to: Self.c) == false, "the refresher runs already")
        #expect(
            machine.nextRefreshStep(now: 110 * Self.ms) == .read([Self.b, Self.a, Self.seed]),
            "the known primaries (one further each read), then the seeds"
        )
        #expect(machine.readSucceeded(Self.cTookOver, now: 111 * Self.ms) == [Self.b], "b is no primary any more: its pool goes")
        #expect(machine.route(slot: 9001, now: 0) == .send(Self.c, startRefresher: false))
        #expect(machine.nextRefreshStep(now: 111 * Self.ms) == .stop)
        #expect(machine.movedFollowed == 2)
    }

    @Test func askIsFollowedOnceWithoutTouchingTheMap() {
        var machine = Self.installed()
        #expect(machine.redirected(movedSlot: nil, to: Self.c) == false, "ASK reads no topology")
        #expect(machine.route(slot: 9000, now: 0) == .send(Self.b, startRefresher: false), "the next request goes to the map's owner again")
        #expect(!machine.isRefreshing)
        #expect(machine.askFollowed == 1 && machine.movedFollowed == 0)
    }

    @Test func aReadAskedForDuringAReadRunsAfterIt() {
        var machine = Self.installed()
        #expect(machine.requestRefresh() == true)
        #expect(machine.nextRefreshStep(now: Self.interval) == .read([Self.b, Self.a, Self.seed]))
        #expect(machine.requestRefresh() == false)
        _ = machine.readSucceeded(Self.twoShards, now: 2 * Self.interval)
        #expect(machine.nextRefreshStep(now: 2 * Self.interval) == .sleep(until: 3 * Self.interval))
        #expect(
            machine.nextRefreshStep(now: 3 * Self.interval) == .read([Self.a, Self.b, Self.seed]),
            "each read starts one primary further"
        )
    }

    @Test func aFailedReadKeepsTheMapAndRetriesABoundedNumberOfTimes() {
        var machine = Self.installed(maxFailedReads: 3)
        #expect(machine.requestRefresh() == true)
        var now = Self.interval
        for attempt in 1...3 {
            guard case .read = machine.nextRefreshStep(now: now) else {
                Issue.record("attempt \(attempt) read nothing")
                return
            }
            machine.readFailed(RedisClientError(.connectionFailed, "refused"), now: now)
            #expect(machine.route(slot: 9000, now: 0) == .send(Self.b, startRefresher: false), "the old map stays")
            now += Self.interval
            if attempt < 3 {
                #expect(machine.nextRefreshStep(now: now - 1) == .sleep(until: now), "one interval between tries")
            }
        }
        #expect(machine.nextRefreshStep(now: now) == .stop, "three failures in a row: wait to be asked again")
        #expect(machine.lastFailure?.code == .connectionFailed)
        #expect(machine.requestRefresh() == true, "the next trouble starts it again")
    }

    @Test func withNoMapAFailedReadIsRetriedUntilOneSucceeds() {
        var machine = Self.machine(maxFailedReads: 1)
        _ = machine.route(slot: 1, now: 0)
        var now: UInt64 = 0
        for _ in 0..<5 {
            #expect(machine.nextRefreshStep(now: now) == .read([Self.seed]))
            machine.readFailed(RedisClientError(.authenticationFailed, "WRONGPASS"), now: now)
            now += Self.interval
        }
        #expect(machine.nextRefreshStep(now: now) == .read([Self.seed]))
        _ = machine.readSucceeded(Self.twoShards, now: now)
        #expect(machine.route(slot: 1, now: 0) == .send(Self.a, startRefresher: false))
        #expect(machine.lastFailure == nil)
    }

    @Test func shutdownStopsTheRefresherFailsRequestsAndReturnsEveryPool() {
        var machine = Self.installed()
        _ = machine.route(slot: 1, now: 0)
        _ = machine.redirected(movedSlot: nil, to: Self.c)
        #expect(machine.shutDown() == [Self.a, Self.c, Self.seed])
        #expect(machine.route(slot: 1, now: 0) == .fail(RedisClientError(.shutDown, ""), startRefresher: false))
        #expect(machine.requestRefresh() == false)
        #expect(machine.nextRefreshStep(now: 10 * Self.interval) == .stop)
        #expect(machine.primariesToPing().isEmpty, "readiness makes no pool after shutdown")
    }
}

extension ClusterRouterStateMachineTests {
    /// With no `Service.run()`, the call that started the refresher runs it
    /// and stops at a sleep or its deadline; the owed read restarts from a request.
    @Test func aPausedRefresherIsResumedByTheFirstRequestAfterTheInterval() {
        var machine = Self.installed(at: 0)
        #expect(machine.requestRefresh() == true)
        #expect(machine.nextRefreshStep(now: 10 * Self.ms) == .sleep(until: Self.interval))
        machine.refresherPaused()
        #expect(!machine.isRefreshing)
        #expect(machine.route(slot: 1, now: 50 * Self.ms) == .send(Self.a, startRefresher: false), "not before the interval")
        #expect(machine.route(slot: 1, now: Self.interval) == .send(Self.a, startRefresher: true))
        #expect(machine.route(slot: 1, now: Self.interval) == .send(Self.a, startRefresher: false), "one refresher")
        #expect(machine.nextRefreshStep(now: Self.interval) == .read([Self.b, Self.a, Self.seed]))
        machine.readAbandoned()
        #expect(machine.lastFailure == nil, "an abandoned read is no failure")
        #expect(machine.route(slot: 1, now: Self.interval) == .send(Self.a, startRefresher: true), "and is owed at once")
        #expect(machine.nextRefreshStep(now: Self.interval) == .read([Self.b, Self.a, Self.seed]))
        _ = machine.readSucceeded(Self.twoShards, now: Self.interval + 1)
        #expect(machine.nextRefreshStep(now: Self.interval + 1) == .stop)
        machine.refresherPaused()
        #expect(machine.route(slot: 1, now: 10 * Self.interval) == .send(Self.a, startRefresher: false), "nothing owed")
    }
}

extension ClusterRouterStateMachineTests {
    /// A caller that carries the refresher after its answer never sleeps: it stops, and the read stays owed.
    @Test func aCallerThatMayNotWaitStopsAtASleepAndTheReadStaysOwed() {
        var machine = Self.installed(at: 0)
        #expect(machine.requestRefresh() == true)
        #expect(machine.nextRefreshStep(now: 10 * Self.ms, mayWait: false) == .stop)
        #expect(!machine.isRefreshing)
        #expect(machine.route(slot: 1, now: Self.interval) == .send(Self.a, startRefresher: true))
    }
}
