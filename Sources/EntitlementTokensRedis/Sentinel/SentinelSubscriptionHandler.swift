internal import NIOCore
internal import NIOSSL
internal import RedisRESP

/// The NIO end of a `+switch-master` subscription: it decodes RESP with the
/// client's reply limits, feeds ``SentinelSubscriptionStateMachine`` and
/// carries out its actions; events go to the owner through `deliver`, on the
/// event loop, `.closed` last. Every decision is the machine's.
final class SentinelSubscriptionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var decoder: RESPDecoder
    private var machine: SentinelSubscriptionStateMachine
    private let deliver: (SentinelSubscriptionEvent) -> Void
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(
        machine: SentinelSubscriptionStateMachine,
        replyLimits: RESPLimits,
        deliver: @escaping (SentinelSubscriptionEvent) -> Void
    ) {
        self.machine = machine
        self.decoder = RESPDecoder(limits: replyLimits)
        self.deliver = deliver
    }

    /// `+switch-master` messages for other primary names, ignored (for tests).
    var otherNames: Int { machine.otherNames }

    private var now: UInt64 { (context?.eventLoop.now ?? .now()).uptimeNanoseconds }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { run(machine.connected(now: now)) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        run(machine.fail(RedisClientError(.connectionClosed, "the subscription to sentinel \(machine.endpointDescription) closed")))
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        run(machine.connected(now: now))
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        decoder.feed(unwrapInboundIn(data).readableBytesView)
        do {
            while !machine.isClosed, let reply = try decoder.next() {
                run(machine.received(reply, now: now))
            }
        } catch {
            run(machine.fail(.protocolError(error)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        run(machine.fail(RedisClientError(.connectionClosed, "the subscription to sentinel \(machine.endpointDescription) closed")))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason =
            if error is NIOSSLError || error is BoringSSLError {
                RedisClientError(.tlsFailed, "TLS with sentinel \(machine.endpointDescription) failed: \(error)")
            } else {
                RedisClientError(
                    .connectionClosed,
                    "the subscription to sentinel \(machine.endpointDescription) failed: \(ConnectFailureWords.describe(error))"
                )
            }
        run(machine.fail(reason))
    }

    private func run(_ actions: [SentinelSubscriptionStateMachine.Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                guard let context else { continue }
                var buffer = context.channel.allocator.buffer(capacity: bytes.count)
                buffer.writeBytes(bytes)
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            case .armTimer(let instant):
                timer?.cancel()
                timer = context?.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(instant)) { [weak self] in
                    guard let self else { return }
                    self.timer = nil
                    self.run(self.machine.timerFired(now: self.now))
                }
            case .deliver(let event):
                deliver(event)
            case .closeChannel:
                timer?.cancel()
                timer = nil
                context?.close(promise: nil)
            }
        }
    }
}
