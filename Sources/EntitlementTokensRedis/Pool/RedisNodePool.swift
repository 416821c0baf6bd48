internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import RedisRESP
internal import Synchronization

/// One node's connections: a fixed pool with requests pipelined on them,
/// reconnection with bounded exponential backoff, and the client's bound on
/// outstanding requests. ``RedisClient`` keeps one for a standalone server or
/// a sentinel's primary, one per primary in Cluster, one per sentinel.
///
/// Every decision is ``RedisNodePoolStateMachine``'s; this class only carries
/// its answers out (connects, closes, the owner's call on a loss).
final class RedisNodePool: Sendable {
    typealias Machine = RedisNodePoolStateMachine<RedisConnection, EventLoopFuture<RedisConnection>>

    let configuration: RedisClientConfiguration
    let endpoint: RedisEndpoint
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private let budget: OutstandingBudget
    private let state: Mutex<State>

    private struct State {
        var machine: Machine
        var onLoss: (@Sendable () -> Void)?
    }

    /// After this, a lost connection suspends the pool and calls `onLoss`;
    /// only requests sent with `confirming: true` get through until ``resume()``.
    func suspendOnLoss(_ onLoss: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.onLoss = onLoss
            state.machine.suspendsOnLoss = true
        }
    }

    /// The owner confirmed the node's role: requests flow again.
    func resume() {
        state.withLock { $0.machine.resume() }
    }

    /// `configuration` with `endpoint` as the node; the first request opens a connection, and its success the rest.
    init(
        configuration: RedisClientConfiguration,
        endpoint: RedisEndpoint,
        connections: Int? = nil,
        group: any EventLoopGroup,
        sslContext: NIOSSLContext?,
        budget: OutstandingBudget
    ) {
        var configuration = configuration
        configuration.endpoint = endpoint
        self.configuration = configuration
        self.endpoint = endpoint
        self.group = group
        self.sslContext = sslContext
        self.budget = budget
        let settings = Machine.Settings(
            connections: connections ?? configuration.maxConnections,
            initialReconnectDelay: UInt64(max(0, configuration.initialReconnectDelay.timeAmount.nanoseconds)),
            maximumReconnectDelay: UInt64(max(0, configuration.maximumReconnectDelay.timeAmount.nanoseconds)),
            endpointDescription: "\(endpoint)"
        )
        self.state = Mutex(State(machine: Machine(settings: settings)))
    }

    var isShutDown: Bool { state.withLock { $0.machine.isShutDown } }

    /// Closes every connection; later requests fail with ``RedisClientError/Code/shutDown``.
    func shutdown() async {
        let connections = state.withLock { $0.machine.shutDown() }
        for connection in connections {
            try? await connection.channel.close()
        }
    }

    /// Sends `command` (encoded) and returns its reply by `deadline`; see
    /// ``RESPConnectionHandler/send(_:budgetedBytes:promise:deadline:prelude:afterReply:)``.
    func send(
        encoded command: [UInt8],
        deadline: NIODeadline,
        prelude: [UInt8]? = nil,
        afterReply: AfterReply = .nothing,
        confirming: Bool = false
    ) async throws(RedisClientError) -> RESPReply {
        let bytes = command.count + (prelude?.count ?? 0)
        guard budget.reserve(bytes: bytes) else {
            throw RedisClientError(
                .overloaded,
                "overloaded: \(configuration.maxOutstandingRequests) requests or \(configuration.maxOutstandingBytes) bytes already await Redis"
            )
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
            return try await connection.reply(
                command,
                budgetedBytes: bytes,
                deadline: deadline,
                prelude: prelude,
                afterReply: afterReply
            )
        } catch let error as RedisClientError {
            throw error
        } catch {
            throw RedisClientError(.connectionClosed, "\(endpoint): \(ConnectFailureWords.describe(error))")
        }
    }

    /// A connect the machine asked for: marked under the lock, started after
    /// it is released, so no NIO callback can run while the lock is held.
    private struct Opening {
        let slot: Int
        let attempt: UInt64
        let promise: EventLoopPromise<RedisConnection>
    }

    /// What ``Machine/pick(now:confirming:isHolding:)`` answered, with the connect it started.
    private enum Pick {
        case ready(RedisConnection)
        case wait(EventLoopFuture<RedisConnection>, started: Opening?)
        case fail(RedisClientError)
    }

    /// An open connection (round robin), or one being opened, or the last
    /// connect failure while every slot waits out its backoff.
    private func connection(before deadline: NIODeadline, confirming: Bool) async throws(RedisClientError) -> RedisConnection {
        let pick = state.withLock { state -> Pick in
            switch state.machine.pick(now: MachineTime.now, confirming: confirming, isHolding: { $0.load.isHolding }) {
            case .ready(let connection):
                return .ready(connection)
            case .wait(let future):
                return .wait(future, started: nil)
            case .fail(let error):
                return .fail(error)
            case .open(let slot):
                let promise = group.next().makePromise(of: RedisConnection.self)
                let attempt = state.machine.opening(promise.futureResult, slot: slot)
                return .wait(promise.futureResult, started: Opening(slot: slot, attempt: attempt, promise: promise))
            }
        }
        switch pick {
        case .ready(let connection):
            return connection
        case .fail(let error):
            throw error
        case .wait(let future, let started):
            if let started { startOpening(started) }
            return try await future.boundedValue(before: deadline, context: "cannot connect to \(endpoint)") { [configuration, endpoint] in
                RedisClientError(.timedOut, "no connection to \(endpoint) within \(configuration.operationTimeout.milliseconds) ms")
            }
        }
    }

    /// Connects for a slot the machine marked opening; the machine records the outcome.
    private func startOpening(_ opening: Opening) {
        RedisConnection.open(configuration: configuration, sslContext: sslContext, group: group, budget: budget)
            .cascade(to: opening.promise)
        opening.promise.futureResult.whenComplete { [weak self] result in
            self?.record(result, opening)
        }
    }

    private func record(_ result: Result<RedisConnection, any Error>, _ opening: Opening) {
        switch result {
        case .success(let connection):
            guard state.withLock({ $0.machine.opened(connection, slot: opening.slot, attempt: opening.attempt) }) else {
                connection.close()  // shut down meanwhile
                return
            }
            // Outside the lock: on a closed channel the callback runs at once.
            connection.channel.closeFuture.whenComplete { [weak self] _ in
                self?.forget(connection, slot: opening.slot)
            }
            fill()
        case .failure(let error):
            let failure =
                (error as? RedisClientError)
                ?? RedisClientError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectFailureWords.describe(error))")
            state.withLock { state in
                state.machine.openFailed(
                    failure,
                    slot: opening.slot,
                    attempt: opening.attempt,
                    now: MachineTime.now,
                    jitter: Double.random(in: 0...1)
                )
            }
        }
    }

    /// Opens every free slot the machine names, after a connect succeeded.
    private func fill() {
        let openings = state.withLock { state in
            state.machine.slotsToFill(now: MachineTime.now).map { slot in
                let promise = group.next().makePromise(of: RedisConnection.self)
                return Opening(slot: slot, attempt: state.machine.opening(promise.futureResult, slot: slot), promise: promise)
            }
        }
        for opening in openings { startOpening(opening) }
    }

    /// A closed connection leaves its slot; the next request opens a new one at once.
    private func forget(_ connection: RedisConnection, slot: Int) {
        let onLoss = state.withLock { state in state.machine.closed(connection, slot: slot) ? state.onLoss : nil }
        onLoss?()
    }
}
