import NIOCore
import NIOEmbedded
import NIOTLS
import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// A connection's start-up in its state machine (docs/DESIGN.md#the-redis-clients-state-machines):
/// connecting → TLS handshake (when there is TLS) → logging in → ready →
/// closed, deterministically, events in and actions out, then the handler on
/// an `EmbeddedChannel`. The real servers (wrong passwords, missing
/// databases, TLS names) are RedisReplayStoreTests' and RedisTLSTests'.
@Suite("Redis: a connection's start-up")
struct RedisConnectionStartupTests {
    typealias Machine = RedisConnectionStateMachine<Int>
    static let ms: UInt64 = 1_000_000
    static let endpoint = "redis test:6379"

    static func startup(
        password: Bool = true,
        database: Bool = true,
        tls: Bool = false,
        deadline: UInt64 = 100 * ms
    ) -> RedisConnectionStartup {
        var steps: [RedisConnectionStartup.Step] = []
        if password { steps.append(.init(command: RESPCommand("AUTH", "secret"), failure: .authenticationFailed)) }
        if database { steps.append(.init(command: RESPCommand("SELECT", "3"), failure: .databaseSelectionFailed)) }
        steps.append(.init(command: RESPCommand("PING"), failure: .unexpectedReply))
        return RedisConnectionStartup(steps: steps, waitsForTLSHandshake: tls, hasPassword: password, deadline: deadline)
    }

    static func machine(_ startup: RedisConnectionStartup) -> Machine {
        Machine(limits: .init(maxQueued: 8, stallTimeout: 1000 * ms), endpointDescription: endpoint, startup: startup)
    }

    static let ok = RESPReply.simpleString(Array("OK".utf8))
    static let pong = RESPReply.simpleString(Array("PONG".utf8))
    static let login = "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n"
    static let get = RESPCommand("GET", "k").encoded()

    static func writes(_ actions: [Machine.Action]) -> [String] {
        RedisConnectionStateMachineTests.writes(actions)
    }

    static func closes(_ actions: [Machine.Action]) -> Bool {
        actions.contains { if case .closeChannel = $0 { true } else { false } }
    }

    static func loggedIn(_ actions: [Machine.Action]) -> Bool {
        actions.contains { if case .loggedIn = $0 { true } else { false } }
    }

    static func error(_ message: String) -> RESPReply { .error(Array(message.utf8)) }

    @Test("the login leaves in one write once active; a request meanwhile waits and is sent after PING's answer")
    func aRequestDuringLoginWaits() {
        var machine = Self.machine(Self.startup())
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: 10, deadline: 50 * Self.ms, now: 0, into: &actions)
        #expect(Self.writes(actions).isEmpty, "nothing before the channel is active")
        actions.removeAll()
        machine.connected(now: 1, into: &actions)
        #expect(Self.writes(actions) == [Self.login])
        #expect(actions.contains { if case .write(_, flushNow: true) = $0 { true } else { false } })
        actions.removeAll()
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: 10, deadline: 50 * Self.ms, now: 2, into: &actions)
        machine.received(Self.ok, now: 3, into: &actions)
        machine.received(Self.ok, now: 4, into: &actions)
        #expect(Self.writes(actions).isEmpty && !Self.loggedIn(actions), "held until PING answers")
        #expect(machine.queuedCount == 2 && !machine.isReady)
        actions.removeAll()
        machine.received(Self.pong, now: 5, into: &actions)
        #expect(Self.loggedIn(actions) && machine.isReady)
        #expect(Self.writes(actions) == [String(decoding: Self.get, as: UTF8.self), String(decoding: Self.get, as: UTF8.self)])
        actions.removeAll()
        machine.received(.bulkString(Array("one".utf8)), now: 6, into: &actions)
        #expect(RedisConnectionStateMachineTests.completions(actions) == [1: .success(.bulkString(Array("one".utf8)))])
    }

    @Test("a wrong password fails every waiter with the login error and closes")
    func aWrongPassword() {
        var machine = Self.machine(Self.startup())
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: 10, deadline: 50 * Self.ms, now: 0, into: &actions)
        machine.connected(now: 0, into: &actions)
        actions.removeAll()
        machine.received(Self.error("WRONGPASS invalid username-password pair"), now: 1, into: &actions)
        #expect(RedisConnectionStateMachineTests.completions(actions) == [1: .failure(.authenticationFailed)])
        #expect(actions.contains { if case .release(bytes: 10) = $0 { true } else { false } })
        #expect(Self.closes(actions) && !Self.loggedIn(actions))
        #expect(
            machine.closeReason
                == RedisClientError(
                    .authenticationFailed,
                    "redis test:6379 refused the login: 'WRONGPASS invalid username-password pair'"
                )
        )
        actions.removeAll()
        // SELECT's and PING's replies, when they come, change nothing; a new request fails with the reason.
        machine.received(Self.ok, now: 2, into: &actions)
        machine.enqueue(Self.get, id: 2, promise: 2, budgetedBytes: nil, deadline: 50 * Self.ms, now: 2, into: &actions)
        #expect(RedisConnectionStateMachineTests.completions(actions) == [2: .failure(.authenticationFailed)])
        #expect(Self.writes(actions).isEmpty)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let password: Bool
        /// The replies, in order; the last is refused.
        let replies: [RESPReply]
        let code: RedisClientError.Code
        let message: String
        var testDescription: String { message }
    }

    @Test(
        "each start-up step's refusal is typed, with the message the operator reads",
        arguments: [
            Refusal(
                password: false,
                replies: [error("NOAUTH Authentication required.")],
                code: .authenticationFailed,
                message: "redis test:6379 wants a password (give one with password-file=, or in the URL): 'NOAUTH Authentication required.'"
            ),
            Refusal(
                password: true,
                replies: [error("NOPERM this user has no permissions")],
                code: .authenticationFailed,
                message: "redis test:6379 refused AUTH: 'NOPERM this user has no permissions'"
            ),
            Refusal(
                password: true,
                replies: [ok, error("ERR DB index is out of range")],
                code: .databaseSelectionFailed,
                message: "redis test:6379 refused SELECT: 'ERR DB index is out of range'"
            ),
            Refusal(
                password: true,
                replies: [ok, ok, error("LOADING Redis is loading the dataset in memory")],
                code: .unexpectedReply,
                message: "redis test:6379 refused PING: 'LOADING Redis is loading the dataset in memory'"
            ),
            Refusal(
                password: true,
                replies: [ok, ok, .integer(1)],
                code: .unexpectedReply,
                message: "redis test:6379 refused PING: '1'"
            ),
        ]
    )
    func refusals(_ refusal: Refusal) {
        var machine = Self.machine(Self.startup(password: refusal.password))
        var actions: [Machine.Action] = []
        machine.connected(now: 0, into: &actions)
        for reply in refusal.replies { machine.received(reply, now: 1, into: &actions) }
        #expect(Self.closes(actions) && !Self.loggedIn(actions))
        #expect(machine.closeReason?.code == refusal.code)
        #expect(machine.closeReason?.message == refusal.message)
    }

    @Test("with TLS the login waits for the handshake; a reply before the login is a protocol error")
    func theTLSStep() {
        var machine = Self.machine(Self.startup(tls: true))
        var actions: [Machine.Action] = []
        machine.connected(now: 0, into: &actions)
        #expect(Self.writes(actions).isEmpty, "no password before the handshake (and its name check) is done")
        machine.tlsHandshakeCompleted(now: 1, into: &actions)
        #expect(Self.writes(actions) == [Self.login])

        var early = Self.machine(Self.startup(tls: true))
        actions.removeAll()
        early.connected(now: 0, into: &actions)
        early.received(Self.ok, now: 1, into: &actions)
        #expect(Self.closes(actions) && early.closeReason?.code == .protocolError)
        actions.removeAll()
        early.tlsHandshakeCompleted(now: 2, into: &actions)
        #expect(Self.writes(actions).isEmpty, "closed stays closed")
    }

    @Test("the start-up has one deadline: past it the connection closes as timedOut, its waiters too")
    func theStartupDeadline() {
        var machine = Self.machine(Self.startup(tls: true, deadline: 100 * Self.ms))
        var actions: [Machine.Action] = []
        machine.enqueue(Self.get, id: 1, promise: 1, budgetedBytes: nil, deadline: 500 * Self.ms, now: 0, into: &actions)
        actions.removeAll()
        machine.connected(now: 1, into: &actions)
        #expect(RedisConnectionStateMachineTests.timers(actions) == [100 * Self.ms])
        actions.removeAll()
        machine.timerFired(now: 99 * Self.ms, into: &actions)
        #expect(!Self.closes(actions) && RedisConnectionStateMachineTests.timers(actions) == [100 * Self.ms], "early: asks again")
        actions.removeAll()
        machine.timerFired(now: 100 * Self.ms, into: &actions)
        #expect(Self.closes(actions))
        #expect(RedisConnectionStateMachineTests.completions(actions) == [1: .failure(.timedOut)])
        #expect(machine.closeReason == RedisClientError(.timedOut, "no answer from redis test:6379 within the deadline"))
    }

    @Test("the handler: TLS's handshake event starts the login; PONG completes the start-up, a refusal fails it")
    func theHandler() throws {
        for refused in [false, true] {
            let loop = EmbeddedEventLoop()
            let handler = RESPConnectionHandler(
                endpointDescription: Self.endpoint,
                startup: Self.startup(password: false, database: false, tls: true, deadline: .max),
                stalledTimeout: .seconds(1),
                maxQueued: 8,
                replyLimits: .default,
                budget: OutstandingBudget(maxRequests: 10, maxBytes: 1000)
            )
            let channel = EmbeddedChannel(handler: handler, loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6379)).wait()
            loop.run()
            #expect(try channel.outboundText() == "")
            channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: nil))
            loop.run()
            #expect(try channel.outboundText() == "*1\r\n$4\r\nPING\r\n")
            let started = try #require(handler.startedFuture)
            try channel.writeInbound(ByteBuffer(string: refused ? "-LOADING Redis is loading\r\n" : "+PONG\r\n"))
            loop.run()
            if refused {
                #expect(throws: RedisClientError(.unexpectedReply, "redis test:6379 refused PING: 'LOADING Redis is loading'")) {
                    try started.wait()
                }
                #expect(!channel.isActive)
            } else {
                try started.wait()
                #expect(channel.isActive)
                _ = try channel.finish()
            }
        }
    }
}
