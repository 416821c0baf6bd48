internal import NIOCore
internal import NIOPosix
internal import NIOSSL
public import RedisRESP
internal import Synchronization

/// A small Redis client: a fixed pool of connections with requests pipelined
/// on them, a deadline on every operation, reconnection with bounded
/// exponential backoff, and a bound on outstanding requests.
///
/// Scoped to what the replay store needs (`AUTH`, `SELECT`, `PING`, `SET`),
/// though ``send(_:)`` takes any command that answers with one reply. Safe to
/// share: one client per process is the intended use. Call ``shutdown()``
/// when done.
public final class RedisClient: Sendable {
    public let configuration: RedisClientConfiguration
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private let budget: OutstandingBudget
    private let state: Mutex<State>

    private struct State {
        var slots: [Slot]
        var nextSlot = 0
        var isShutDown = false
    }

    private enum Connection {
        case closed
        case opening(EventLoopFuture<RedisConnection>)
        case open(RedisConnection)
        /// The last attempt failed; the next may start at `retryAt`.
        case waiting(retryAt: NIODeadline, failure: RedisClientError)
    }

    private struct Slot {
        var connection = Connection.closed
        var consecutiveFailures = 0
    }

    /// Connections open lazily, on the first request, on NIO's shared event loops.
    public init(configuration: RedisClientConfiguration) throws(RedisClientError) {
        try configuration.validate()
        self.configuration = configuration
        self.group = MultiThreadedEventLoopGroup.singleton
        self.budget = OutstandingBudget(maxRequests: configuration.maxOutstandingRequests,
                                        maxBytes: configuration.maxOutstandingBytes)
        self.state = Mutex(State(slots: Array(repeating: Slot(), count: configuration.maxConnections)))
        if configuration.endpoint.usesTLS {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caFile = configuration.trustedCAFile {
                tls.trustRoots = .file(caFile)
            }
            do {
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw RedisClientError(.invalidConfiguration, "cannot set up TLS for \(configuration.endpoint): \(error)")
            }
        } else {
            sslContext = nil
        }
    }

    /// Requests sent and not yet answered (timed-out ones included), and their bytes.
    public var outstanding: (requests: Int, bytes: Int) { budget.outstanding }

    /// Sends `command` and returns its reply (an error reply is a reply, not
    /// a thrown error), within ``RedisClientConfiguration/operationTimeout``.
    public func send(_ command: RESPCommand) async throws(RedisClientError) -> RESPReply {
        try await send(encoded: command.encoded())
    }

    /// `PING`, expecting `PONG`: the server answers through this client now.
    public func ping() async throws(RedisClientError) {
        let reply = try await send(RESPCommand("PING"))
        guard reply == .simpleString(Array("PONG".utf8)) else { throw .notExpected("PING", reply) }
    }

    /// Closes every connection; later requests fail with ``RedisClientError/Code/shutDown``.
    public func shutdown() async {
        let connections = state.withLock { state -> [RedisConnection] in
            state.isShutDown = true
            let open = state.slots.compactMap { slot -> RedisConnection? in
                if case .open(let connection) = slot.connection { return connection }
                return nil
            }
            for index in state.slots.indices { state.slots[index].connection = .closed }
            return open
        }
        for connection in connections {
            try? await connection.channel.close()
        }
    }

    func send(encoded command: [UInt8]) async throws(RedisClientError) -> RESPReply {
        let deadline = NIODeadline.now() + configuration.operationTimeout.timeAmount
        guard budget.reserve(bytes: command.count) else {
            throw RedisClientError(.overloaded,
                "overloaded: \(configuration.maxOutstandingRequests) requests or \(configuration.maxOutstandingBytes) bytes already await \(configuration.endpoint)")
        }
        let connection: RedisConnection
        do {
            connection = try await self.connection(before: deadline)
        } catch {
            budget.release(bytes: command.count)
            throw error
        }
        // From here the connection's handler owns the reservation.
        do {
            return try await connection.send(command, budgetedBytes: command.count, deadline: deadline).get()
        } catch let error as RedisClientError {
            throw error
        } catch {
            throw RedisClientError(.connectionClosed, "\(configuration.endpoint): \(error)")
        }
    }

    private enum Pick {
        case ready(RedisConnection)
        case wait(EventLoopFuture<RedisConnection>)
        case fail(RedisClientError)
    }

    /// A slot marked opening under the lock; the connect starts after it is
    /// released, so no NIO callback can run while the lock is held.
    private struct Opening {
        let slot: Int
        let promise: EventLoopPromise<RedisConnection>
    }

    /// An open connection (round robin), or one being opened, or the last
    /// connect failure while every slot waits out its backoff.
    private func connection(before deadline: NIODeadline) async throws(RedisClientError) -> RedisConnection {
        let now = NIODeadline.now()
        var started: [Opening] = []
        let pick = state.withLock { state -> Pick in
            if state.isShutDown { return .fail(RedisClientError(.shutDown, "the Redis client was shut down")) }
            let count = state.slots.count
            // Open connections first, round robin; closed ones start opening now.
            var opening: EventLoopFuture<RedisConnection>?
            var lastFailure: RedisClientError?
            var soonestRetry: NIODeadline?
            for step in 0..<count {
                let index = (state.nextSlot + step) % count
                switch state.slots[index].connection {
                case .open(let connection):
                    state.nextSlot = (index + 1) % count
                    return .ready(connection)
                case .opening(let future):
                    opening = opening ?? future
                case .closed:
                    if opening == nil { opening = markOpening(slot: index, state: &state, started: &started) }
                case .waiting(let retryAt, let failure):
                    if retryAt <= now {
                        if opening == nil { opening = markOpening(slot: index, state: &state, started: &started) }
                    } else {
                        lastFailure = failure
                        soonestRetry = min(soonestRetry ?? retryAt, retryAt)
                    }
                }
            }
            if let opening { return .wait(opening) }
            let retryIn = soonestRetry.map { ($0 - now).nanoseconds / 1_000_000 } ?? 0
            let failure = lastFailure ?? RedisClientError(.connectionFailed, "no connection to \(configuration.endpoint)")
            return .fail(RedisClientError(failure.code, "\(failure.message) (next attempt in \(retryIn) ms)"))
        }
        for opening in started { startOpening(opening) }
        switch pick {
        case .ready(let connection):
            return connection
        case .fail(let error):
            throw error
        case .wait(let future):
            let bounded = future.eventLoop.makePromise(of: RedisConnection.self)
            let timeout = future.eventLoop.scheduleTask(deadline: deadline) { [configuration] in
                bounded.fail(RedisClientError(.timedOut,
                    "no connection to \(configuration.endpoint) within \(configuration.operationTimeout.milliseconds) ms"))
            }
            future.cascade(to: bounded)
            bounded.futureResult.whenComplete { _ in timeout.cancel() }
            do {
                return try await bounded.futureResult.get()
            } catch let error as RedisClientError {
                throw error
            } catch {
                throw RedisClientError(.connectionFailed, "cannot connect to \(configuration.endpoint): \(error)")
            }
        }
    }

    /// Marks `slot` as opening; ``startOpening(_:)`` connects once the lock is released.
    private func markOpening(slot index: Int, state: inout State, started: inout [Opening]) -> EventLoopFuture<RedisConnection> {
        let promise = group.next().makePromise(of: RedisConnection.self)
        state.slots[index].connection = .opening(promise.futureResult)
        started.append(Opening(slot: index, promise: promise))
        return promise.futureResult
    }

    /// Connects for a slot marked opening; the slot records the outcome.
    private func startOpening(_ opening: Opening) {
        RedisConnection.open(configuration: configuration, sslContext: sslContext, group: group, budget: budget)
            .cascade(to: opening.promise)
        let future = opening.promise.futureResult
        future.whenComplete { [weak self] result in
            self?.record(result, slot: opening.slot, future: future)
        }
    }

    private func record(_ result: Result<RedisConnection, any Error>, slot index: Int, future: EventLoopFuture<RedisConnection>) {
        let stale: RedisConnection? = state.withLock { state in
            guard case .opening(let current) = state.slots[index].connection, current === future, !state.isShutDown else {
                return try? result.get()  // shut down meanwhile: close what opened
            }
            switch result {
            case .success(let connection):
                state.slots[index] = Slot(connection: .open(connection), consecutiveFailures: 0)
            case .failure(let error):
                let failure = (error as? RedisClientError)
                    ?? RedisClientError(.connectionFailed, "cannot connect to \(configuration.endpoint): \(error)")
                let failures = state.slots[index].consecutiveFailures + 1
                state.slots[index] = Slot(connection: .waiting(retryAt: .now() + reconnectDelay(afterFailures: failures),
                                                               failure: failure),
                                          consecutiveFailures: failures)
            }
            return nil
        }
        if let stale {
            stale.close()
        } else if case .success(let connection) = result {
            // Outside the lock: on a closed channel the callback runs at once.
            connection.channel.closeFuture.whenComplete { [weak self] _ in
                self?.forget(connection, slot: index)
            }
        }
    }

    /// A closed connection leaves its slot; the next request opens a new one at once
    /// (a failure to do so then starts the backoff).
    private func forget(_ connection: RedisConnection, slot index: Int) {
        state.withLock { state in
            if case .open(let current) = state.slots[index].connection, current === connection {
                state.slots[index].connection = .closed
            }
        }
    }

    /// initial × 2^(failures−1), capped, then jittered to 50–100 % so a fleet
    /// that lost Redis together does not come back in step.
    private func reconnectDelay(afterFailures failures: Int) -> TimeAmount {
        let initial = configuration.initialReconnectDelay.timeAmount.nanoseconds
        let maximum = configuration.maximumReconnectDelay.timeAmount.nanoseconds
        let exponent = min(failures - 1, 30)
        let delay = min(maximum, initial.multipliedReportingOverflow(by: Int64(1) << exponent).overflow
                        ? maximum : initial << exponent)
        return .nanoseconds(delay / 2 + Int64.random(in: 0...(delay / 2)))
    }
}
