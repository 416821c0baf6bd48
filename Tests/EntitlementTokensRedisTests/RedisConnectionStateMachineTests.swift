import NIOCore
import NIOEmbedded
import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// The connection's decisions (docs/DESIGN.md#state-machines-and-thin-handlers), deterministically: the state
/// machine alone (events in, actions out, no NIO), then the handler on an
/// `EmbeddedChannel` with time advanced by hand. No socket, no sleeping.
@Suite("Redis: the connection's state machine")
struct RedisConnectionStateMachineTests {
    typealias Machine = RedisConnectionStateMachine<Int>
    static let ms: UInt64 = 1_000_000

    /// A start-up of `PING` alone, with no deadline to speak of.
    static let pingOnly = RedisConnectionStartup(
        steps: [.init(command: RESPCommand("PING"), failure: .unexpectedReply)],
        waitsForTLSHandshake: false,
        hasPassword: false,
        deadline: .max
    )

    /// A machine past its start-up (connected, `PING` answered).
    static func machine(maxQueued: Int = 64, stallMilliseconds: UInt64 = 1000) -> Machine {
        var machine = Machine(
            limits: .init(maxQueued: maxQueued, stallTimeout: stallMilliseconds * ms),
            endpointDescription: "redis test:6379",
            startup: pingOnly
        )
        var actions: [Machine.Action] = []
        machine.connected(now: 0, into: &actions)
        machine.received(.simpleString(Array("PONG".utf8)), now: 0, into: &actions)
        precondition(machine.isReady)
        return machine
    }

    /// Which promises each list of actions completes, and how.
    /// How a caller was answered.
    enum Completion: Equatable {
        case success(RESPReply)
        case failure(RedisClientError.Code)
    }

    static func completions(_ actions: [Machine.Action]) -> [Int: Completion] {
        var found: [Int: Completion] = [:]
        for action in actions {
            switch action {
            case .succeed(let promise, let reply): found[promise] = .success(reply)
            case .fail(let promise, let error): found[promise] = .failure(error.code)
            default: break
            }
        }
        return found
    }

    static func timers(_ actions: [Machine.Action]) -> [UInt64] {
        actions.compactMap { if case .armTimer(let at) = $0 { at } else { nil } }
    }

    static func writes(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { if case .write(let bytes, _) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    static let get = RESPCommand("GET", "k").encoded()

    @Test("one timer per connection: armed for the earliest deadline, moved only earlier")
    func oneRollingTimer() {
        var machine = Self.machine(maxQueued: 2000)
        var actions: [Machine.Action] = []
        for index in 0..<1000 {
            machine.enqueue(
                Self.get,
                id: UInt64(index),
                promise: index,
                budgetedBytes: nil,
                deadline: (50 + UInt64(index)) * Self.ms,
                now: UInt64(index) * 1000,
                into: &actions
            )
        }
        #expect(Self.timers(actions) == [50 * Self.ms], "one timer for 1000 requests")
        actions.removeAll()
        machine.enqueue(Self.get, id: 1000, promise: 1000, budgetedBytes: nil, deadline: 10 * Self.ms, now: 2 * Self.ms, into: &actions)
        #expect(Self.timers(actions) == [10 * Self.ms], "an earlier deadline moves it earlier")
        actions.removeAll()
        // It fires: only the expired request fails; the timer re-arms for the next deadline.
        machine.timerFired(now: 10 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [1000: .failure(.timedOut)])
        #expect(Self.timers(actions) == [50 * Self.ms])
        actions.removeAll()
        machine.timerFired(now: 52 * Self.ms, into: &actions)
        #expect(Self.completions(actions).count == 3)  // deadlines 50, 51, 52 ms
        #expect(Self.timers(actions) == [53 * Self.ms])
    }

    @Test("replies meet their requests in order; a timed-out request keeps its place until its reply")
    func repliesInOrderPastADeadline() {
        var machine = Self.machine()
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: 10, deadline: 50 * Self.ms, now: 0, into: &actions)
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: 10, deadline: 500 * Self.ms, now: 0, into: &actions)
        #expect(Self.writes(actions).count == 2)
        actions.removeAll()
        machine.timerFired(now: 50 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [1: .failure(.timedOut)])
        #expect(!actions.contains { if case .release = $0 { true } else { false } }, "a timed-out request keeps its budget until its reply")
        actions.removeAll()
        machine.received(.bulkString(Array("late".utf8)), now: 60 * Self.ms, into: &actions)
        #expect(Self.completions(actions).isEmpty, "the late reply belongs to the timed-out request")
        #expect(actions.contains { if case .release(10) = $0 { true } else { false } })
        actions.removeAll()
        machine.received(.bulkString(Array("two".utf8)), now: 61 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [2: .success(.bulkString(Array("two".utf8)))])
        #expect(machine.queuedCount == 0)
    }

    @Test("the queue is bounded: one more request fails at once with overloaded")
    func queueBound() {
        var machine = Self.machine(maxQueued: 2)
        var actions: [Machine.Action] = []
        for id in 1...3 {
            machine.enqueue(Self.get, id: UInt64(id), promise: id, budgetedBytes: 7, deadline: 50 * Self.ms, now: 0, into: &actions)
        }
        #expect(Self.completions(actions) == [3: .failure(.overloaded)])
        #expect(Self.writes(actions).count == 2)
        #expect(actions.contains { if case .release(7) = $0 { true } else { false } }, "the refused request's budget is given back")
        #expect(machine.queuedCount == 2)
    }

    @Test("a cancelled caller fails at once; its reply, when it comes, is dropped")
    func cancellation() {
        var machine = Self.machine()
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 7, promise: 7, budgetedBytes: nil, deadline: 50 * Self.ms, now: 0, into: &actions)
        machine.enqueue(Self.get, id: 8, promise: 8, budgetedBytes: nil, deadline: 50 * Self.ms, now: 0, into: &actions)
        actions.removeAll()
        machine.cancel(7, into: &actions)
        #expect(Self.completions(actions) == [7: .failure(.cancelled)])
        actions.removeAll()
        machine.cancel(7, into: &actions)
        #expect(actions.isEmpty, "cancelled once")
        machine.received(.simpleString(Array("seven".utf8)), now: 1, into: &actions)
        machine.received(.simpleString(Array("eight".utf8)), now: 2, into: &actions)
        #expect(Self.completions(actions) == [8: .success(.simpleString(Array("eight".utf8)))])
    }

    @Test("WAIT after OK on the same connection; requests meanwhile are held, then written")
    func waitHoldsTheConnection() {
        var machine = Self.machine()
        var actions: [Machine.Action] = []
        machine.enqueue(
            RESPCommand("SET", "k", "1").encoded(),
            id: 1,
            promise: 1,
            budgetedBytes: nil,
            deadline: 50 * Self.ms,
            afterReply: .waitForReplicas(1),
            now: 0,
            into: &actions
        )
        actions.removeAll()
        machine.received(.simpleString(Array("OK".utf8)), now: 10 * Self.ms, into: &actions)
        #expect(Self.writes(actions) == [String(decoding: RESPCommand("WAIT", "1", "40").encoded(), as: UTF8.self)])
        #expect(actions.contains { if case .setHolding(true) = $0 { true } else { false } })
        actions.removeAll()
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: nil, deadline: 80 * Self.ms, now: 11 * Self.ms, into: &actions)
        #expect(Self.writes(actions).isEmpty, "held behind the WAIT")
        actions.removeAll()
        machine.received(.integer(1), now: 20 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [1: .success(.array([.simpleString(Array("OK".utf8)), .integer(1)]))])
        #expect(Self.writes(actions).count == 1, "the held request leaves once WAIT answered")
        // Under 1 ms left: WAIT is not sent (WAIT n 0 blocks forever).
        actions.removeAll()
        machine.received(.null, now: 21 * Self.ms, into: &actions)
        machine.enqueue(
            RESPCommand("SET", "k", "1").encoded(),
            id: 3,
            promise: 3,
            budgetedBytes: nil,
            deadline: 30 * Self.ms,
            afterReply: .waitForReplicas(1),
            now: 21 * Self.ms,
            into: &actions
        )
        actions.removeAll()
        machine.received(.simpleString(Array("OK".utf8)), now: 29 * Self.ms + 500_000, into: &actions)
        #expect(Self.completions(actions) == [3: .failure(.timedOut)])
        #expect(Self.writes(actions).isEmpty)
    }

    @Test("a stalled connection closes once its oldest request is past its deadline and the stall timeout")
    func stall() {
        var machine = Self.machine(stallMilliseconds: 1000)
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: nil, deadline: 50 * Self.ms, now: 0, into: &actions)
        actions.removeAll()
        machine.timerFired(now: 50 * Self.ms, into: &actions)
        #expect(Self.timers(actions) == [1000 * Self.ms])
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: nil, deadline: 1600 * Self.ms, now: 600 * Self.ms, into: &actions)
        actions.removeAll()
        machine.timerFired(now: 1000 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [2: .failure(.timedOut)])
        #expect(actions.contains { if case .closeChannel = $0 { true } else { false } })
        #expect(machine.closeReason?.message.contains("has not answered") == true)
        // A slow answer within a long deadline is no stall.
        var patient = Self.machine(stallMilliseconds: 100)
        actions.removeAll()
        patient.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: nil, deadline: 5000 * Self.ms, now: 0, into: &actions)
        patient.timerFired(now: 200 * Self.ms, into: &actions)
        #expect(patient.closeReason == nil)
    }

    @Test("closed with requests in flight: every one fails, sent or held, and nothing after it is sent")
    func closedInFlight() {
        var machine = Self.machine()
        var actions: [Machine.Action] = []
        machine.enqueue(
            RESPCommand("SET", "k", "1").encoded(),
            id: 1,
            promise: 1,
            budgetedBytes: 3,
            deadline: 50 * Self.ms,
            afterReply: .waitForReplicas(1),
            now: 0,
            into: &actions
        )
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: 3, deadline: 50 * Self.ms, now: 0, into: &actions)
        machine.received(.simpleString(Array("OK".utf8)), now: 1 * Self.ms, into: &actions)  // WAIT out for 1
        machine.received(.null, now: 1 * Self.ms, into: &actions)  // 2 answered
        machine.enqueue(Self.get, id: 3, promise: 3, budgetedBytes: 3, deadline: 50 * Self.ms, now: 2 * Self.ms, into: &actions)  // held
        actions.removeAll()
        machine.closed(RedisClientError(.connectionClosed, "gone"), into: &actions)
        #expect(Self.completions(actions) == [1: .failure(.connectionClosed), 3: .failure(.connectionClosed)])
        #expect(actions.filter { if case .release = $0 { true } else { false } }.count == 2)
        #expect(actions.contains { if case .setHolding(false) = $0 { true } else { false } })
        actions.removeAll()
        machine.enqueue(Self.get, id: 4, promise: 4, budgetedBytes: nil, deadline: 50 * Self.ms, now: 3 * Self.ms, into: &actions)
        #expect(Self.completions(actions) == [4: .failure(.connectionClosed)])
        #expect(Self.writes(actions).isEmpty)
    }

    @Test("a reply nobody asked for and a READONLY reply close the connection")
    func strayAndReadOnly() {
        var machine = Self.machine()
        var actions: [Machine.Action] = []
        machine.received(.integer(1), now: 0, into: &actions)
        #expect(machine.closeReason?.code == .protocolError)
        var replica = Self.machine()
        actions.removeAll()
        replica.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: nil, deadline: 50 * Self.ms, now: 0, into: &actions)
        replica.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: nil, deadline: 50 * Self.ms, now: 0, into: &actions)
        actions.removeAll()
        replica.received(.error(Array("READONLY You can't write against a read only replica.".utf8)), now: 1, into: &actions)
        #expect(Self.completions(actions)[1] == .success(.error(Array("READONLY You can't write against a read only replica.".utf8))))
        #expect(Self.completions(actions)[2] == .failure(.connectionClosed))
    }
}

@Suite("Redis: MOVED and ASK decisions")
struct ClusterRedirectFollowerTests {
    static let a = RedisNodeAddress(host: "127.0.0.1", port: 7000)!
    static let b = RedisNodeAddress(host: "127.0.0.1", port: 7001)!

    static func error(_ text: String) -> RESPReply { .error(Array(text.utf8)) }

    @Test func movedAskAndTheirLimits() {
        var follower = ClusterRedirectFollower(target: Self.a, slot: 3999)
        #expect(follower.received(Self.error("MOVED 3999 127.0.0.1:7001")) == .follow(movedSlot: 3999))
        #expect(follower.target == Self.b && !follower.asking)
        #expect(follower.received(Self.error("ASK 3999 :7000")) == .follow(movedSlot: nil))
        #expect(follower.target == Self.a && follower.asking, "an empty host is the answering node's")
        #expect(follower.received(.simpleString(Array("OK".utf8))) == .answer(.simpleString(Array("OK".utf8)), refreshTopology: false))
        // A cluster-state error is the caller's answer (.unavailable) and refreshes the topology.
        var down = ClusterRedirectFollower(target: Self.a, slot: 1)
        #expect(
            down.received(Self.error("CLUSTERDOWN The cluster is down"))
                == .answer(Self.error("CLUSTERDOWN The cluster is down"), refreshTopology: true)
        )
        #expect(down.received(Self.error("OOM command not allowed")) == .answer(Self.error("OOM command not allowed"), refreshTopology: false))
        // Malformed, and a loop.
        var broken = ClusterRedirectFollower(target: Self.a, slot: 1)
        #expect(broken.received(Self.error("MOVED x y")) == .fail(RedisClientError(.unexpectedReply, ""), refreshTopology: true))
        var loop = ClusterRedirectFollower(target: Self.a, slot: 1)
        for _ in 0..<ClusterRedirectFollower.maxRedirects {
            #expect(loop.received(Self.error("MOVED 1 127.0.0.1:7001")) == .follow(movedSlot: 1))
        }
        #expect(loop.received(Self.error("MOVED 1 127.0.0.1:7001")) == .fail(RedisClientError(.unexpectedReply, ""), refreshTopology: true))
        // A failure after sending is not retried; a node that may be gone asks for a refresh.
        #expect(loop.failed(RedisClientError(.connectionClosed, "")) == .fail(RedisClientError(.connectionClosed, ""), refreshTopology: true))
        #expect(loop.failed(RedisClientError(.overloaded, "")) == .fail(RedisClientError(.overloaded, ""), refreshTopology: false))
    }
}

/// The handler on `EmbeddedChannel`: real NIO plumbing, virtual time.
@Suite("Redis: the connection handler on an embedded channel")
struct RESPConnectionHandlerTests {
    final class Outcome: @unchecked Sendable {
        var result: RedisConnectionStateMachineTests.Completion?
        var reply: RESPReply? { if case .success(let reply) = result { reply } else { nil } }
        var code: RedisClientError.Code? { if case .failure(let code) = result { code } else { nil } }
    }

    struct Connection {
        let channel: EmbeddedChannel
        let handler: RESPConnectionHandler
        let budget: OutstandingBudget
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init(loop: EmbeddedEventLoop = EmbeddedEventLoop(), maxQueued: Int = 64, stall: TimeAmount = .seconds(1)) throws {
            budget = OutstandingBudget(maxRequests: 1000, maxBytes: 1 << 20)
            handler = RESPConnectionHandler(
                endpointDescription: "redis test:6379",
                startup: RedisConnectionStateMachineTests.pingOnly,
                stalledTimeout: stall,
                maxQueued: maxQueued,
                replyLimits: .default,
                budget: budget
            )
            channel = EmbeddedChannel(handler: handler, loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6379)).wait()
            // The start-up: PING, answered.
            loop.run()
            #expect(try channel.outboundText() == "*1\r\n$4\r\nPING\r\n")
            try channel.writeInbound(ByteBuffer(string: "+PONG\r\n"))
        }

        /// Sends `command` with this deadline, counted in the budget like a
        /// caller's request; `then` runs in the promise's callback, inside the
        /// handler's batch that completed it.
        func send(_ command: RESPCommand, id: UInt64 = 0, deadline: NIODeadline, then: (@Sendable () -> Void)? = nil) -> Outcome {
            let outcome = Outcome()
            let bytes = command.encoded()
            #expect(budget.reserve(bytes: bytes.count))
            let promise = loop.makePromise(of: RESPReply.self)
            promise.futureResult.whenComplete { result in
                switch result {
                case .success(let reply): outcome.result = .success(reply)
                case .failure(let error): outcome.result = .failure((error as? RedisClientError)?.code ?? .unexpectedReply)
                }
                then?()
            }
            handler.send(bytes, id: id, budgetedBytes: bytes.count, promise: promise, deadline: deadline)
            return outcome
        }

        /// What left on the wire so far.
        func written() throws -> String {
            loop.run()
            return try channel.outboundText()
        }

        func answer(_ bytes: String) throws {
            try channel.writeInbound(ByteBuffer(string: bytes))
        }
    }

    @Test func repliesInOrderInOneWrite() throws {
        let connection = try Connection()
        let deadline = connection.loop.now + .milliseconds(50)
        let first = connection.send(RESPCommand("GET", "a"), deadline: deadline)
        let second = connection.send(RESPCommand("GET", "b"), deadline: deadline)
        #expect(try connection.written() == "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n")
        try connection.answer("$1\r\nA\r\n$1\r")
        #expect(first.reply == .bulkString(Array("A".utf8)) && second.result == nil)
        try connection.answer("\nB\r\n")
        #expect(second.reply == .bulkString(Array("B".utf8)))
        #expect(connection.budget.outstanding.requests == 0)
        #expect(connection.handler.armedTimer == deadline, "one timer, at the earliest deadline")
    }

    @Test func aReplyPastItsDeadline() throws {
        let connection = try Connection()
        let start = connection.loop.now
        let slow = connection.send(RESPCommand("GET", "a"), deadline: start + .milliseconds(50))
        let patient = connection.send(RESPCommand("GET", "b"), deadline: start + .milliseconds(500))
        connection.loop.advanceTime(by: .milliseconds(49))
        #expect(slow.result == nil)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(slow.code == .timedOut)
        #expect(connection.budget.outstanding.requests == 2, "held until its reply")
        try connection.answer("$4\r\nlate\r\n$1\r\nB\r\n")
        #expect(patient.reply == .bulkString(Array("B".utf8)))
        #expect(connection.channel.isActive)
        #expect(connection.budget.outstanding.requests == 0)
    }

    @Test func aStalledConnectionIsClosed() throws {
        let connection = try Connection(stall: .seconds(1))
        let start = connection.loop.now
        let first = connection.send(RESPCommand("GET", "a"), deadline: start + .milliseconds(50))
        connection.loop.advanceTime(by: .milliseconds(600))
        #expect(first.code == .timedOut && connection.channel.isActive)
        let second = connection.send(RESPCommand("GET", "b"), deadline: connection.loop.now + .seconds(5))
        connection.loop.advanceTime(by: .milliseconds(399))
        #expect(second.result == nil && connection.channel.isActive)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(!connection.channel.isActive, "closed at sent + stall timeout")
        #expect(second.code == .timedOut)
        #expect(connection.budget.outstanding.requests == 0, "every reservation given back")
    }

    /// A request sent from a callback of the batch that timed another out
    /// (a pool hands the connection to a queued request) is cut at its own
    /// deadline: the batch's older timer action (the stall instant, later)
    /// does not replace the earlier timer that send armed.
    /// The request a completion sends, on the test's one thread (the embedded loop's).
    final class SecondRequest: @unchecked Sendable {
        let connection: Connection
        var outcome: Outcome?
        init(_ connection: Connection) { self.connection = connection }
        func send() {
            outcome = connection.send(RESPCommand("GET", "b"), deadline: connection.loop.now + .milliseconds(200))
        }
    }

    @Test func aRequestSentFromACompletionIsCutAtItsOwnDeadline() throws {
        let connection = try Connection(stall: .seconds(1))
        let start = connection.loop.now
        let second = SecondRequest(connection)
        // Called back synchronously from the handler's batch, as a pool's release is.
        let first = connection.send(RESPCommand("GET", "a"), deadline: start + .milliseconds(100)) { second.send() }
        connection.loop.advanceTime(by: .milliseconds(100))
        #expect(first.code == .timedOut)
        let sent = try #require(second.outcome)
        #expect(connection.handler.armedTimer == start + .milliseconds(300), "the machine arms the second's deadline")
        connection.loop.advanceTime(by: .milliseconds(199))
        #expect(sent.result == nil)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(sent.code == .timedOut, "cut at 300 ms, not at the stall close (1 s)")
        #expect(connection.channel.isActive, "the connection lives on: no stall yet")
    }

    @Test func theQueueBound() throws {
        let connection = try Connection(maxQueued: 2)
        let deadline = connection.loop.now + .milliseconds(50)
        let outcomes = (0..<3).map { _ in connection.send(RESPCommand("PING"), deadline: deadline) }
        #expect(outcomes[2].code == .overloaded)
        #expect(outcomes[0].result == nil && outcomes[1].result == nil)
        #expect(connection.budget.outstanding.requests == 2)
    }

    @Test func closedWithRequestsInFlightAllFailNoneHang() throws {
        let connection = try Connection()
        let deadline = connection.loop.now + .seconds(10)
        let outcomes = (0..<5).map { _ in connection.send(RESPCommand("PING"), deadline: deadline) }
        try connection.answer("+PONG\r\n")
        try connection.channel.close().wait()
        #expect(outcomes[0].reply == .simpleString(Array("PONG".utf8)))
        #expect(outcomes.dropFirst().allSatisfy { $0.code == .connectionClosed })
        let late = connection.send(RESPCommand("PING"), deadline: deadline)
        #expect(late.code == .connectionClosed, "a request after the close fails at once")
        #expect(connection.budget.outstanding.requests == 0)
    }

    @Test func aCancelledRequestFailsAtOnce() throws {
        let connection = try Connection()
        let deadline = connection.loop.now + .milliseconds(50)
        let cancelled = connection.send(RESPCommand("GET", "a"), id: 41, deadline: deadline)
        let kept = connection.send(RESPCommand("GET", "b"), id: 42, deadline: deadline)
        connection.handler.cancel(41)
        #expect(cancelled.code == .cancelled && kept.result == nil)
        try connection.answer("$1\r\nA\r\n$1\r\nB\r\n")
        #expect(kept.reply == .bulkString(Array("B".utf8)))
    }

    /// The router's loop, by hand: node A answers MOVED, the follower points
    /// at B, and B is asked with the same deadline, not a new one.
    @Test func aRedirectIsFollowedWithinTheOneDeadline() throws {
        let loop = EmbeddedEventLoop()
        let nodeA = try Connection(loop: loop)
        let nodeB = try Connection(loop: loop)
        for (answerAfter, expected) in [(TimeAmount.milliseconds(30), RedisClientError.Code?.none), (.milliseconds(45), .timedOut)] {
            let deadline = loop.now + .milliseconds(50)
            var follower = ClusterRedirectFollower(target: RedisNodeAddress(host: "127.0.0.1", port: 7000)!, slot: 3999)
            let first = nodeA.send(RESPCommand("SET", "k", "1"), deadline: deadline)
            loop.advanceTime(by: .milliseconds(10))
            try nodeA.answer("-MOVED 3999 127.0.0.1:7001\r\n")
            let redirect = try #require(first.reply)
            #expect(follower.received(redirect) == .follow(movedSlot: 3999))
            #expect(follower.target == RedisNodeAddress(host: "127.0.0.1", port: 7001))
            let second = nodeB.send(RESPCommand("SET", "k", "1"), deadline: deadline)
            loop.advanceTime(by: answerAfter)
            if let expected {
                #expect(second.code == expected, "B's request ran out the caller's deadline")
                try nodeB.answer("+OK\r\n")  // late, dropped
            } else {
                try nodeB.answer("+OK\r\n")
                #expect(follower.received(try #require(second.reply)) == .answer(.simpleString(Array("OK".utf8)), refreshTopology: false))
            }
            _ = try nodeA.written()
            _ = try nodeB.written()
        }
    }
}
