import Testing

@testable import EntitlementTokensRedis

/// One node's pool decisions (docs/DESIGN.md#state-machines-and-thin-handlers), deterministically:
/// plain objects for connections, strings for what requests wait on, time given by hand.
@Suite("Redis: the node pool's state machine")
struct RedisNodePoolStateMachineTests {
    final class Connection {
        var isHolding = false
    }

    typealias Machine = RedisNodePoolStateMachine<Connection, String>
    static let ms: UInt64 = 1_000_000

    static func machine(connections: Int = 2) -> Machine {
        Machine(
            settings: .init(
                connections: connections,
                initialReconnectDelay: 100 * ms,
                maximumReconnectDelay: 1000 * ms,
                endpointDescription: "redis.test:6379"
            )
        )
    }

    enum Outcome: Equatable {
        case ready(ObjectIdentifier)
        case wait(String)
        case open(Int)
        case fail(RedisClientError.Code)
    }

    static func pick(_ machine: inout Machine, now: UInt64 = 0, confirming: Bool = false) -> Outcome {
        switch machine.pick(now: now, confirming: confirming, isHolding: { $0.isHolding }) {
        case .ready(let connection): .ready(ObjectIdentifier(connection))
        case .wait(let opening): .wait(opening)
        case .open(let slot): .open(slot)
        case .fail(let error): .fail(error.code)
        }
    }

    /// Opens a connection in `slot` (asked for by a pick) and returns it.
    static func open(_ machine: inout Machine, slot: Int) -> Connection {
        let connection = Connection()
        let attempt = machine.opening("slot \(slot)", slot: slot)
        #expect(machine.opened(connection, slot: slot, attempt: attempt) == true)
        return connection
    }

    @Test func neverMoreConnectionsThanSlotsHoweverManyRequests() {
        var machine = Self.machine(connections: 2)
        #expect(Self.pick(&machine) == .open(0))
        let attempt = machine.opening("first", slot: 0)
        for _ in 0..<100 {
            #expect(Self.pick(&machine) == .wait("first"), "requests wait on the one being opened")
        }
        let first = Connection()
        #expect(machine.opened(first, slot: 0, attempt: attempt) == true)
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(first)))
        #expect(machine.openCount == 1, "an open connection takes requests; nothing more opens")
    }

    @Test func requestsGoRoundRobinAndAHoldingConnectionOnlyWhenNoOtherIsOpen() {
        var machine = Self.machine(connections: 2)
        _ = Self.pick(&machine)
        let a = Self.open(&machine, slot: 0)
        let b = Self.open(&machine, slot: 1)
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(a)))
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(b)))
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(a)))
        a.isHolding = true
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(b)))
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(b)), "not the one whose WAIT holds its requests")
        b.isHolding = true
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(a)), "all holding: one of them rather than none")
    }

    @Test func aHoldingConnectionMakesAFreeSlotOpenRatherThanHoldTheRequest() {
        var machine = Self.machine(connections: 3)
        _ = Self.pick(&machine)
        let a = Self.open(&machine, slot: 0)
        a.isHolding = true
        #expect(Self.pick(&machine) == .open(1), "a free slot opens rather than the request wait behind a WAIT")
        let attempt = machine.opening("second", slot: 1)
        #expect(Self.pick(&machine) == .wait("second"))
        let b = Connection()
        #expect(machine.opened(b, slot: 1, attempt: attempt) == true)
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(b)), "an open one not holding before a slot to open")
        b.isHolding = true
        #expect(Self.pick(&machine) == .open(2))
        let c = Self.open(&machine, slot: 2)
        c.isHolding = true
        #expect(
            [ObjectIdentifier(a), ObjectIdentifier(b), ObjectIdentifier(c)].map { Outcome.ready($0) }.contains(Self.pick(&machine)),
            "all holding and none to open: one of them"
        )
    }

    @Test func aSuccessfulConnectNamesEveryOtherFreeSlotToOpen() {
        var machine = Self.machine(connections: 4)
        #expect(machine.slotsToFill(now: 0).count == 4)
        #expect(Self.pick(&machine) == .open(0))
        let first = machine.opening("first", slot: 0)
        #expect(machine.opened(Connection(), slot: 0, attempt: first) == true)
        // Slot 3 failed a moment ago: it waits out its backoff, and is named once that is past.
        let failed = machine.opening("third", slot: 3)
        machine.openFailed(RedisClientError(.connectionFailed, "refused"), slot: 3, attempt: failed, now: 0, jitter: 1)
        #expect(machine.slotsToFill(now: 0) == [1, 2])
        #expect(machine.slotsToFill(now: 100 * Self.ms) == [1, 2, 3])
        _ = machine.opening("filling", slot: 1)
        #expect(machine.slotsToFill(now: 0) == [2], "a slot being opened is not named again")
        _ = machine.shutDown()
        #expect(machine.slotsToFill(now: 0).isEmpty, "nothing opens after shutdown")
    }

    @Test func aBrokenConnectionIsReplacedAtOnce() {
        var machine = Self.machine(connections: 1)
        _ = Self.pick(&machine)
        let broken = Self.open(&machine, slot: 0)
        #expect(machine.closed(broken, slot: 0) == false, "no owner asked to hear of a loss")
        #expect(machine.openCount == 0)
        #expect(Self.pick(&machine) == .open(0), "the next request opens a new one, no backoff")
        let replacement = Self.open(&machine, slot: 0)
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(replacement)))
        #expect(machine.closed(broken, slot: 0) == false, "a stale close changes nothing")
        #expect(Self.pick(&machine) == .ready(ObjectIdentifier(replacement)))
    }

    @Test func aFailedConnectBacksOffExponentiallyAndRequestsFailFastMeanwhile() {
        var machine = Self.machine(connections: 1)
        var now: UInt64 = 0
        var delays: [UInt64] = []
        for _ in 0..<5 {
            #expect(Self.pick(&machine, now: now) == .open(0))
            let attempt = machine.opening("try", slot: 0)
            machine.openFailed(RedisClientError(.connectionFailed, "refused"), slot: 0, attempt: attempt, now: now, jitter: 1)
            #expect(Self.pick(&machine, now: now + 1) == .fail(.connectionFailed), "no wait during the backoff")
            var retry = now + 1
            while Self.pick(&machine, now: retry) != .open(0) { retry += Self.ms }
            delays.append((retry - now) / Self.ms)
            now = retry
        }
        #expect(delays == [100, 200, 400, 800, 1000], "doubling, capped at the maximum")
        #expect(machine.reconnectDelay(afterFailures: 1, jitter: 0) == 50 * Self.ms, "jitter keeps 50–100 %")
    }

    @Test func aLostConnectionSuspendsThePoolUntilTheOwnerConfirmsTheRole() {
        var machine = Self.machine(connections: 1)
        machine.suspendsOnLoss = true
        _ = Self.pick(&machine)
        let lost = Self.open(&machine, slot: 0)
        #expect(machine.closed(lost, slot: 0) == true, "the owner is told")
        #expect(Self.pick(&machine) == .fail(.connectionClosed), "no request reaches a node whose role is unconfirmed")
        #expect(Self.pick(&machine, confirming: true) == .open(0), "ROLE gets through")
        machine.resume()
        _ = machine.opening("again", slot: 0)
        #expect(Self.pick(&machine) == .wait("again"))
    }

    @Test func shutdownClosesEverythingAndALateConnectIsClosed() {
        var machine = Self.machine(connections: 2)
        _ = Self.pick(&machine)
        let open = Self.open(&machine, slot: 0)
        let late = machine.opening("late", slot: 1)
        #expect(machine.shutDown().map(ObjectIdentifier.init) == [ObjectIdentifier(open)])
        #expect(Self.pick(&machine) == .fail(.shutDown))
        #expect(machine.opened(Connection(), slot: 1, attempt: late) == false, "closed by the pool, not kept")
    }
}
