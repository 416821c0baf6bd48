internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import RedisRESP
internal import Synchronization

/// One node's connections: a fixed pool with requests pipelined on them,
/// reconnection with bounded exponential backoff, and the client's bound on
/// outstanding requests. ``RedisClient`` keeps one for a standalone server or
/// a sentinel's primary, one per primary in Cluster, one per sentinel.
final class RedisNodePool: Sendable {
    let configuration: RedisClientConfiguration
    let endpoint: RedisEndpoint
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private let budget: OutstandingBudget
    private let state: Mutex<State>

    private struct State {
        var slots: [Slot]
        var nextSlot = 0
        var isShutDown = false
        /// A connection was lost and this pool may only reach its node again
        /// once its owner confirms the node's role (Sentinel): the address may
        /// now be an empty, restarted server that calls itself primary.
        var isSuspended = false
        var onLoss: (@Sendable () -> Void)?
    }

    /// After this, a lost connection suspends the pool and calls `onLoss`;
    /// only requests sent with `confirming: true` get through until ``resume()``.
    func suspendOnLoss(_ onLoss: @escaping @Sendable () -> Void) {
        state.withLock { $0.onLoss = onLoss }
    }

    /// The owner confirmed the node's role: requests flow again.
    func resume() {
        state.withLock { $0.isSuspended = false }
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

    /// `configuration` with `endpoint` as the node; connections open lazily, on the first request.
    init(configuration: RedisClientConfiguration, endpoint: RedisEndpoint, connections: Int? = nil,
         group: any EventLoopGroup, sslContext: NIOSSLContext?, budget: OutstandingBudget) {
        var configuration = configuration
        configuration.endpoint = endpoint
        self.configuration = configuration
        self.endpoint = endpoint
        self.group = group
        self.sslContext = sslContext
        self.budget = budget
        self.state = Mutex(State(slots: Array(repeating: Slot(), count: connections ?? configuration.maxConnections)))
    }

    var isShutDown: Bool { state.withLock { $0.isShutDown } }

    /// Closes every connection; later requests fail with ``RedisClientError/Code/shutDown``.
    func shutdown() async {
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

    /// Sends `command` (encoded) and returns its reply by `deadline`; see
    /// ``RESPConnectionHandler/send(_:budgetedBytes:promise:deadline:prelude:afterReply:)``.
    func send(encoded command: [UInt8], deadline: NIODeadline, prelude: [UInt8]? = nil,
              afterReply: AfterReply = .nothing, confirming: Bool = false) async throws(RedisClientError) -> RESPReply {
        let bytes = command.count + (prelude?.count ?? 0)
        guard budget.reserve(bytes: bytes) else {
            throw RedisClientError(.overloaded,
                "overloaded: \(configuration.maxOutstandingRequests) requests or \(configuration.maxOutstandingBytes) bytes already await Redis")
        }
        let connection: RedisConnection
        do {
            connection = try await self.connection(before: deadline, confirming: confirming)
        } catch {
            budget.release(bytes: bytes)
            throw error
        }
        // From here the connection's handler owns the reservation.
        do {
            return try await connection.reply(command, budgetedBytes: bytes, deadline: deadline,
                                              prelude: prelude, afterReply: afterReply)
        } catch let error as RedisClientError {
            throw error
        } catch {
            throw RedisClientError(.connectionClosed, "\(endpoint): \(ConnectFailureWords.describe(error))")
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
    private func connection(before deadline: NIODeadline, confirming: Bool) async throws(RedisClientError) -> RedisConnection {
        let now = NIODeadline.now()
        var started: [Opening] = []
        let pick = state.withLock { state -> Pick in
            if state.isShutDown { return .fail(RedisClientError(.shutDown, "the Redis client was shut down")) }
            if state.isSuspended, !confirming {
                return .fail(RedisClientError(.connectionClosed, "the connection to \(endpoint) was lost; its role is being confirmed"))
            }
            let count = state.slots.count
            // Open connections first, round robin; closed ones start opening now.
            var opening: EventLoopFuture<RedisConnection>?
            var lastFailure: RedisClientError?
            var soonestRetry: NIODeadline?
            var holdingConnection: RedisConnection?
            for step in 0..<count {
                let index = (state.nextSlot + step) % count
                switch state.slots[index].connection {
                case .open(let connection):
                    // One whose WAIT holds its requests only when no other is open.
                    if connection.load.isHolding {
                        holdingConnection = holdingConnection ?? connection
                        continue
                    }
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
            if let holdingConnection { return .ready(holdingConnection) }
            if let opening { return .wait(opening) }
            let retryIn = soonestRetry.map { ($0 - now).nanoseconds / 1_000_000 } ?? 0
            let failure = lastFailure ?? RedisClientError(.connectionFailed, "no connection to \(endpoint)")
            return .fail(RedisClientError(failure.code, "\(failure.message) (next attempt in \(retryIn) ms)"))
        }
        for opening in started { startOpening(opening) }
        switch pick {
        case .ready(let connection):
            return connection
        case .fail(let error):
            throw error
        case .wait(let future):
            return try await future.boundedValue(before: deadline, context: "cannot connect to \(endpoint)") { [configuration, endpoint] in
                RedisClientError(.timedOut, "no connection to \(endpoint) within \(configuration.operationTimeout.milliseconds) ms")
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
                    ?? RedisClientError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectFailureWords.describe(error))")
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
        let onLoss = state.withLock { state -> (@Sendable () -> Void)? in
            guard case .open(let current) = state.slots[index].connection, current === connection else { return nil }
            state.slots[index].connection = .closed
            guard !state.isShutDown, let onLoss = state.onLoss else { return nil }
            state.isSuspended = true
            return onLoss
        }
        onLoss?()
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
