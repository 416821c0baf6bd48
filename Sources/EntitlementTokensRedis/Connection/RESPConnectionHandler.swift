internal import NIOCore
internal import NIOSSL
internal import NIOTLS
internal import RedisRESP
internal import Synchronization

/// Whether a connection holds new requests back (a `WAIT` is out), readable
/// from any thread, so the pool sends elsewhere first.
final class ConnectionLoad: Sendable {
    private let holding = Atomic<Bool>(false)
    var isHolding: Bool { holding.load(ordering: .relaxed) }
    func setHolding(_ value: Bool) { holding.store(value, ordering: .relaxed) }
}

/// The NIO end of one connection: it feeds ``RedisConnectionStateMachine``
/// the events (the channel active, the TLS handler's handshake-completed
/// event, a request, a decoded reply, the one timer, a cancellation, the
/// channel closing) and carries out its actions (write, complete a promise,
/// arm the timer, report the start-up, close). Every decision is the machine's.
final class RESPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias StateMachine = RedisConnectionStateMachine<EventLoopPromise<RESPReply>>

    private var decoder: RESPDecoder
    private var machine: StateMachine
    /// The machine's actions, kept between events so the hot path does not allocate.
    private var actions: [StateMachine.Action] = []
    /// The connection's one timer (see the machine's "One timer per connection").
    private var timer: Scheduled<Void>?
    /// When `timer` fires: always the machine's armed instant once a batch's timer action is carried out.
    private var timerInstant: UInt64?
    let load: ConnectionLoad
    private var context: ChannelHandlerContext?
    private var flushScheduled = false
    private let budget: OutstandingBudget
    private let endpointDescription: String
    /// Completed when the start-up is over: logged in, or closed and why.
    private var started: EventLoopPromise<Void>?
    /// The start-up's outcome; read on the event loop, once the handler is in a pipeline.
    private(set) var startedFuture: EventLoopFuture<Void>?

    /// Why the connection closed, readable from any thread: a channel can
    /// close (a TLS handshake refused at once) before its opener gets to the
    /// handler, and the opener must still give that reason, not "not found".
    let firstCloseReason: CloseReason

    final class CloseReason: Sendable {
        private let reason = Mutex<RedisClientError?>(nil)
        func record(_ error: RedisClientError) { reason.withLock { if $0 == nil { $0 = error } } }
        var value: RedisClientError? { reason.withLock { $0 } }
    }

    init(
        endpointDescription: String,
        startup: RedisConnectionStartup,
        stalledTimeout: TimeAmount,
        maxQueued: Int,
        replyLimits: RESPLimits,
        budget: OutstandingBudget,
        firstCloseReason: CloseReason = CloseReason(),
        load: ConnectionLoad = ConnectionLoad()
    ) {
        self.firstCloseReason = firstCloseReason
        self.load = load
        self.decoder = RESPDecoder(limits: replyLimits)
        self.endpointDescription = endpointDescription
        self.machine = StateMachine(
            limits: .init(maxQueued: maxQueued, stallTimeout: UInt64(max(0, stalledTimeout.nanoseconds))),
            endpointDescription: endpointDescription,
            startup: startup
        )
        self.budget = budget
        actions.reserveCapacity(8)
    }

    /// Requests queued on the connection (for tests).
    var outstandingCount: Int { machine.queuedCount }
    /// When the one timer is armed for, on the event loop's clock (for tests).
    var armedTimer: NIODeadline? { machine.armedTimerInstant.map { .uptimeNanoseconds($0) } }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let started = context.eventLoop.makePromise(of: Void.self)
        self.started = started
        startedFuture = started.futureResult
        if context.channel.isActive {
            machine.connected(now: now, into: &actions)
            run()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        machine.closed(RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"), into: &actions)
        run()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        machine.connected(now: now, into: &actions)
        run()
        context.fireChannelActive()
    }

    /// The TLS handler's (or, with `tls-server-name=`, ``TLSServerNameCheck``'s,
    /// once the name is checked) word that the handshake is done.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            machine.tlsHandshakeCompleted(now: now, into: &actions)
            run()
        }
        context.fireUserInboundEventTriggered(event)
    }

    private var now: UInt64 {
        (context?.eventLoop.now ?? .now()).uptimeNanoseconds
    }

    /// Writes `command` and completes `promise` with its reply or a failure,
    /// by `deadline` at the latest. Flushes once per event-loop turn, so
    /// requests that arrive together leave in one write. A `prelude` (an
    /// `ASKING`) is written right before the command, in the same write, so
    /// no other request comes between them; its reply is dropped. `id`
    /// names the request for ``cancel(_:)``.
    func send(
        _ command: [UInt8],
        id: UInt64 = 0,
        budgetedBytes: Int?,
        promise: EventLoopPromise<RESPReply>,
        deadline: NIODeadline,
        prelude: [UInt8]? = nil,
        afterReply: AfterReply = .nothing
    ) {
        guard context != nil else {
            promise.fail(machine.closeReason ?? RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"))
            if let budgetedBytes { budget.release(bytes: budgetedBytes) }
            return
        }
        machine.enqueue(
            command,
            id: id,
            promise: promise,
            budgetedBytes: budgetedBytes,
            deadline: deadline.uptimeNanoseconds,
            prelude: prelude,
            afterReply: afterReply,
            now: now,
            into: &actions
        )
        run()
    }

    /// The caller of request `id` stopped waiting: it fails now with `cancelled`.
    func cancel(_ id: UInt64) {
        machine.cancel(id, into: &actions)
        run()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        decoder.feed(bytes.readableBytesView)
        do {
            while machine.closeReason == nil, let reply = try decoder.next() {
                machine.received(reply, now: now, into: &actions)
                run()
            }
        } catch {
            machine.closed(.protocolError(error), into: &actions)
            run()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed(RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"), into: &actions)
        run()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason =
            if let error = error as? RedisClientError {
                error
            } else if error is NIOSSLError || error is BoringSSLError {
                RedisClientError(.tlsFailed, "TLS with \(endpointDescription) failed: \(error)")
            } else {
                // In an operator's words ("connection reset by peer"), never SwiftNIO's
                // (`read(descriptor:pointer:size:): Connection reset (errno: 104)`): docs/DESIGN.md#operators.
                RedisClientError(.connectionClosed, "the connection to \(endpointDescription) failed: \(ConnectFailureWords.describe(error))")
            }
        machine.closed(reason, into: &actions)
        run()
    }

    private func timerFired() {
        timer = nil
        timerInstant = nil
        machine.timerFired(now: now, into: &actions)
        run()
    }

    /// Schedules the one timer where the machine has it armed now, or none.
    ///
    /// The machine's word at the time, not the action's: a completed
    /// promise's callback may send again on this handler (a pool handing the
    /// connection to a queued request) and arm an earlier instant in a batch
    /// of its own, while the batch that completed the promise still carries a
    /// later instant or a cancel. Carried out as written, that older action
    /// would replace the earlier timer, and a request would wait past its
    /// deadline until the later one.
    private func matchTimer() {
        let armed = machine.armedTimerInstant
        guard armed != timerInstant || (armed != nil && timer == nil) else { return }
        timer?.cancel()
        timer = nil
        timerInstant = armed
        guard let armed, let loop = context?.eventLoop.assumeIsolated() else { return }
        timer = loop.scheduleTask(deadline: .uptimeNanoseconds(armed)) { [weak self] in
            self?.timerFired()
        }
    }

    /// Carries out the machine's actions. A completed promise may run a
    /// caller's callback that sends again on this handler: the actions are
    /// taken out first, so such a nested event starts a list of its own.
    private func run() {
        guard !actions.isEmpty else { return }
        var batch: [StateMachine.Action] = []
        swap(&batch, &actions)
        for action in batch {
            switch action {
            case .write(let bytes, let flushNow):
                write(bytes, flushNow: flushNow)
            case .succeed(let promise, let reply):
                promise.succeed(reply)
            case .fail(let promise, let error):
                promise.fail(error)
            case .release(let bytes):
                budget.release(bytes: bytes)
            case .armTimer, .cancelTimer:
                matchTimer()
            case .setHolding(let holding):
                load.setHolding(holding)
            case .loggedIn:
                started?.succeed()
                started = nil
            case .closeChannel:
                if let reason = machine.closeReason {
                    firstCloseReason.record(reason)
                    started?.fail(reason)
                    started = nil
                }
                context?.close(promise: nil)
            }
        }
        if actions.isEmpty {
            batch.removeAll(keepingCapacity: true)
            actions = batch
        }
    }

    private func write(_ bytes: [UInt8], flushNow: Bool) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
        if flushNow {
            context.flush()
        } else if !flushScheduled {
            flushScheduled = true
            context.eventLoop.assumeIsolated().execute { [weak self] in
                guard let self else { return }
                self.flushScheduled = false
                self.context?.flush()
            }
        }
    }
}
