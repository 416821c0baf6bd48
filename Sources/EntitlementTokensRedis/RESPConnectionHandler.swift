internal import Synchronization
internal import NIOCore
internal import NIOSSL
internal import RedisRESP

/// A request sent on a connection and awaiting its reply. Confined to the
/// connection's event loop.
final class PendingRequest {
    let promise: EventLoopPromise<RESPReply>
    /// Bytes held in the client's ``OutstandingBudget``; nil for the
    /// connection's own set-up commands, which are outside it.
    let budgetedBytes: Int?
    let sentAt: NIODeadline
    var timeout: Scheduled<Void>?

    init(promise: EventLoopPromise<RESPReply>, budgetedBytes: Int?, sentAt: NIODeadline) {
        self.promise = promise
        self.budgetedBytes = budgetedBytes
        self.sentAt = sentAt
    }
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
         replyLimits: RESPLimits, budget: OutstandingBudget, firstCloseReason: CloseReason = CloseReason()) {
        self.firstCloseReason = firstCloseReason
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
    /// requests that arrive together leave in one write.
    func send(_ command: [UInt8], budgetedBytes: Int?, promise: EventLoopPromise<RESPReply>, deadline: NIODeadline) {
        guard let context, closeReason == nil else {
            promise.fail(closeReason ?? RedisClientError(.connectionClosed, "the connection to \(endpointDescription) closed"))
            if let budgetedBytes { budget.release(bytes: budgetedBytes) }
            return
        }
        let request = PendingRequest(promise: promise, budgetedBytes: budgetedBytes, sentAt: .now())
        let loop = context.eventLoop.assumeIsolated()
        request.timeout = loop.scheduleTask(deadline: deadline) { [weak self, weak request] in
            guard let self, let request else { return }
            request.promise.fail(self.timeoutError)
            self.watchForStall()
        }
        pending.append(request)
        var buffer = context.channel.allocator.buffer(capacity: command.count)
        buffer.writeBytes(command)
        context.write(wrapOutboundOut(buffer), promise: nil)
        if !flushScheduled {
            flushScheduled = true
            loop.execute { [weak self] in
                guard let self else { return }
                self.flushScheduled = false
                self.context?.flush()
            }
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
                finish(request, with: .success(reply))
                if case .error(let message) = reply, message.starts(with: "READONLY".utf8) {
                    // After a failover the old primary is a replica: only a new
                    // connection can reach the new one (DNS or a virtual address).
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
        request.promise.completeWith(result.mapError { $0 as any Error })  // ignored when the deadline already failed it
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
