internal import Synchronization
internal import NIOCore
internal import NIOSSL
internal import RedisRESP

/// A request sent on a connection and awaiting its reply. Confined to the
/// connection's event loop.
final class PendingRequest {
    /// nil for a prelude (`ASKING`), whose reply nobody awaits.
    let promise: EventLoopPromise<RESPReply>?
    /// Bytes held in the client's ``OutstandingBudget``; nil for the
    /// connection's own set-up commands, which are outside it.
    let budgetedBytes: Int?
    var sentAt: NIODeadline
    let deadline: NIODeadline
    var timeout: Scheduled<Void>?
    /// What to do once the reply arrives (`WAIT` after a `SET` that answered `OK`).
    var afterReply: AfterReply
    /// The reply that led to this follow-up (`SET`'s `OK`), when this is one.
    var firstReply: RESPReply?
    /// Failed by its deadline before it was written (held behind a `WAIT`).
    var isSettled = false

    init(promise: EventLoopPromise<RESPReply>?, budgetedBytes: Int?, sentAt: NIODeadline, deadline: NIODeadline,
         afterReply: AfterReply = .nothing) {
        self.promise = promise
        self.budgetedBytes = budgetedBytes
        self.sentAt = sentAt
        self.deadline = deadline
        self.afterReply = afterReply
    }
}

/// A follow-up a request asks of its connection once its reply arrives.
enum AfterReply: Sendable {
    case nothing
    /// After `OK`, `WAIT <replicas> <remaining deadline in ms>` on this
    /// connection (WAIT counts only its own connection's writes), which takes
    /// no other request until WAIT answers; the caller gets
    /// `.array([OK, WAIT's reply])`. Below 1 ms left, the request fails
    /// `timedOut` without sending (`WAIT n 0` blocks forever).
    case waitForReplicas(Int)
}

/// Whether a connection holds new requests back (a `WAIT` is out), readable
/// from any thread, so the pool sends elsewhere first.
final class ConnectionLoad: Sendable {
    private let holding = Atomic<Bool>(false)
    var isHolding: Bool { holding.load(ordering: .relaxed) }
    func setHolding(_ value: Bool) { holding.store(value, ordering: .relaxed) }
}

/// The RESP end of one connection: writes commands, decodes replies and
/// hands each to the oldest request still waiting (RESP answers in order,
/// so pipelined requests need no ids).
///
/// A request whose deadline passes is failed at once but stays in the queue
/// until its reply arrives, so the replies after it still meet their own
/// requests. When the oldest request has waited longer than the stall
/// timeout, the connection is closed: the server hangs or the path to it is
/// gone, and only a new connection can tell.
final class RESPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var decoder: RESPDecoder
    private var pending = CircularBuffer<PendingRequest>(initialCapacity: 16)
    /// Requests not yet written because a `WAIT` is out on this connection.
    private var held = CircularBuffer<(request: PendingRequest, bytes: [UInt8], hasPrelude: Bool)>()
    /// `WAIT`s written and not yet answered.
    private var waitsOut = 0
    let load: ConnectionLoad
    private var context: ChannelHandlerContext?
    private var flushScheduled = false
    private var closeReason: RedisClientError?
    /// Armed once a request times out: fires when the oldest request
    /// reaches the stall timeout, whether or not more requests come.
    private var stallCheck: Scheduled<Void>?
    private let endpointDescription: String
    private let timeoutError: RedisClientError
    private let stalledTimeout: TimeAmount
    private let budget: OutstandingBudget

    /// Why the connection closed, readable from any thread: a channel can
    /// close (a TLS handshake refused at once) before its opener gets to the
    /// handler, and the opener must still give that reason, not "not found".
    let firstCloseReason: CloseReason

    final class CloseReason: Sendable {
        private let reason = Mutex<RedisClientError?>(nil)
        func record(_ error: RedisClientError) { reason.withLock { if $0 == nil { $0 = error } } }
        var value: RedisClientError? { reason.withLock { $0 } }
    }

    init(endpointDescription: String, operationTimeout: Duration, stalledTimeout: TimeAmount,
         replyLimits: RESPLimits, budget: OutstandingBudget, firstCloseReason: CloseReason = CloseReason(), load: ConnectionLoad = ConnectionLoad()) {
        self.firstCloseReason = firstCloseReason
        self.load = load
        self.decoder = RESPDecoder(limits: replyLimits)
        self.endpointDescription = endpointDescription
        self.timeoutError = RedisClientError(.timedOut, "no answer from \(endpointDescription) within \(operationTimeout.milliseconds) ms")
        self.stalledTimeout = stalledTimeout
        self.budget = budget
    }

    var outstandingCount: Int { pending.count }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close(because: RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"))
        self.context = nil
    }

    /// Writes `command` and completes `promise` with its reply or a failure,
    /// by `deadline` at the latest. Flushes once per event-loop turn, so
    /// requests that arrive together leave in one write. A `prelude` (an
    /// `ASKING`) is written right before the command, in the same write, so
    /// no other request comes between them; its reply is dropped.
    func send(_ command: [UInt8], budgetedBytes: Int?, promise: EventLoopPromise<RESPReply>, deadline: NIODeadline,
              prelude: [UInt8]? = nil, afterReply: AfterReply = .nothing) {
        guard let context, closeReason == nil else {
            promise.fail(closeReason ?? RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"))
            if let budgetedBytes { budget.release(bytes: budgetedBytes) }
            return
        }
        let request = PendingRequest(promise: promise, budgetedBytes: budgetedBytes, sentAt: .now(), deadline: deadline,
                                     afterReply: afterReply)
        armTimeout(request, context: context)
        var bytes = prelude ?? []
        bytes += command
        if waitsOut > 0 {
            // A WAIT blocks this connection on the server: what is written
            // now would wait behind it. Hold it here until WAIT answers.
            held.append((request, bytes, prelude != nil))
            return
        }
        if prelude != nil {
            pending.append(PendingRequest(promise: nil, budgetedBytes: nil, sentAt: .now(), deadline: deadline))
        }
        pending.append(request)
        write(bytes, context: context)
    }

    private func armTimeout(_ request: PendingRequest, context: ChannelHandlerContext) {
        request.timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: request.deadline) { [weak self, weak request] in
            guard let self, let request else { return }
            request.isSettled = true
            request.promise?.fail(self.timeoutError)
            self.watchForStall()
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext, flushNow: Bool = false) {
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

    /// `OK` arrived for a request that wants `WAIT`: send it now, on this
    /// connection, and hold new requests until it answers.
    private func sendWait(replicas: Int, after reply: RESPReply, for request: PendingRequest, context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        let milliseconds = (request.deadline - now).nanoseconds / 1_000_000
        guard milliseconds >= 1, !request.isSettled else {
            finish(request, with: .failure(RedisClientError(.timedOut,
                "\(endpointDescription) accepted the write with under 1 ms left for WAIT; not sent (WAIT n 0 blocks forever)")))
            return
        }
        let wait = PendingRequest(promise: request.promise, budgetedBytes: request.budgetedBytes, sentAt: now,
                                  deadline: request.deadline)
        wait.firstReply = reply
        wait.timeout = request.timeout  // the same deadline keeps running
        request.timeout = nil
        pending.append(wait)
        waitsOut += 1
        load.setHolding(true)
        write(RESPCommand("WAIT", String(replicas), String(milliseconds)).encoded(), context: context, flushNow: true)
    }

    /// WAIT answered and no other is out: write what was held, skipping what its deadline already failed.
    private func releaseHeld(context: ChannelHandlerContext) {
        load.setHolding(false)
        while waitsOut == 0, let (request, bytes, hasPrelude) = held.popFirst() {
            if request.isSettled {
                if let bytes = request.budgetedBytes { budget.release(bytes: bytes) }
                continue
            }
            if hasPrelude {
                pending.append(PendingRequest(promise: nil, budgetedBytes: nil, sentAt: .now(), deadline: request.deadline))
            }
            request.sentAt = .now()
            pending.append(request)
            write(bytes, context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        decoder.feed(bytes.readableBytesView)
        do {
            while let reply = try decoder.next() {
                guard let request = pending.popFirst() else {
                    close(because: RedisClientError(.protocolError, "\(endpointDescription) sent a reply no request asked for"))
                    return
                }
                if let first = request.firstReply {
                    waitsOut -= 1
                    finish(request, with: .success(.array([first, reply])))
                    if waitsOut == 0 { releaseHeld(context: context) }
                } else if case .waitForReplicas(let replicas) = request.afterReply, reply.isOK {
                    sendWait(replicas: replicas, after: reply, for: request, context: context)
                } else {
                    finish(request, with: .success(reply))
                }
                if case .error(let message) = reply, message.starts(with: "READONLY".utf8) {
                    // After a failover the old primary is a replica: only a new
                    // connection can reach the new one (DNS, a virtual address,
                    // or the sentinels' new answer).
                    close(because: RedisClientError(.connectionClosed,
                        "\(endpointDescription) is a read-only replica; closed to reconnect"))
                    return
                }
            }
        } catch {
            close(because: .protocolError(error))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        close(because: RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError || error is BoringSSLError {
            close(because: RedisClientError(.tlsFailed, "TLS with \(endpointDescription) failed: \(error)"))
        } else {
            close(because: RedisClientError(.connectionClosed, "the connection to \(endpointDescription) failed: \(error)"))
        }
    }

    private func finish(_ request: PendingRequest, with result: Result<RESPReply, RedisClientError>) {
        request.timeout?.cancel()
        request.timeout = nil
        request.promise?.completeWith(result.mapError { $0 as any Error })  // ignored when the deadline already failed it
        if let bytes = request.budgetedBytes { budget.release(bytes: bytes) }
    }

    /// Checks at the oldest request's stall time, and again for the next
    /// oldest while requests wait: a server that stops answering stops
    /// sending the replies (and the new requests, once the bound is full)
    /// that would otherwise bring the check around.
    private func watchForStall() {
        guard stallCheck == nil, closeReason == nil, let context, let oldest = pending.first else { return }
        stallCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: oldest.sentAt + stalledTimeout) { [weak self] in
            guard let self else { return }
            self.stallCheck = nil
            self.closeIfStalled()
            self.watchForStall()
        }
    }

    private func closeIfStalled() {
        guard let oldest = pending.first, NIODeadline.now() - oldest.sentAt >= stalledTimeout else { return }
        close(because: RedisClientError(.timedOut,
            "\(endpointDescription) has not answered for \(stalledTimeout.nanoseconds / 1_000_000) ms; connection closed"))
    }

    /// Fails every waiting request with `reason` and closes the channel; the first reason stays.
    private func close(because reason: RedisClientError) {
        if closeReason == nil { closeReason = reason }
        firstCloseReason.record(reason)
        stallCheck?.cancel()
        stallCheck = nil
        while let request = pending.popFirst() {
            finish(request, with: .failure(closeReason ?? reason))
        }
        while let (request, _, _) = held.popFirst() {
            finish(request, with: .failure(closeReason ?? reason))
        }
        waitsOut = 0
        load.setHolding(false)
        context?.close(promise: nil)
    }
}

extension Duration {
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    var timeAmount: TimeAmount {
        .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
    }
}
