import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The deadline of one whole request, head and body, from its first byte
/// (docs/DESIGN.md#limits-deadlines-and-revocation): a head still incomplete at the deadline closes the connection
/// with no answer; an incomplete body gets 408 and `Connection: close` (or a
/// close, when the answer was already sent). It also takes each request's
/// share of the shared body budget, answering 503 `Retry-After: 1` before the
/// body is read when the budget is spent.
///
/// Two handlers share one state: ``FirstByte`` sits before the HTTP decoder
/// and sees the first byte of a request; ``Parts`` sits after it and sees the
/// head and the end. Both run on the connection's event loop. Idle
/// kept-alive connections are not this deadline's business: the server's
/// idle timeout closes them.
final class RequestDeadline {
    private let timeout: TimeAmount
    private let limiter: ConnectionLimiter
    private let metrics: GateMetrics
    /// When the request in flight runs out; nil between requests.
    private var due: NIODeadline?
    /// One timer per connection, rolled forward rather than scheduled and
    /// cancelled per request: when it fires early (its request ended and
    /// another began), it re-arms for the current request's deadline.
    private var timer: Scheduled<Void>?
    private var headReceived = false
    /// An answer to the current request has begun: a 408 would be a second one.
    private var answered = false
    private var reservedBodyBytes = 0
    private weak var partsContext: ChannelHandlerContext?

    /// A body whose length is not declared (chunked) reserves the most a route reads.
    static let undeclaredBodyBytes = ReportEndpoints.maximumBodyBytes

    init(timeout: TimeAmount, limiter: ConnectionLimiter, metrics: GateMetrics) {
        self.timeout = timeout
        self.limiter = limiter
        self.metrics = metrics
    }

    /// The handlers, in pipeline order: the first before the HTTP decoder, the second after it.
    func handlers() -> (FirstByte, Parts) { (FirstByte(self), Parts(self)) }

    private func firstByte(_ context: ChannelHandlerContext) {
        guard due == nil else { return }
        headReceived = false
        answered = false
        let deadline = NIODeadline.now() + timeout
        due = deadline
        if timer == nil { arm(at: deadline, context.eventLoop, context.channel) }
    }

    private func arm(at deadline: NIODeadline, _ eventLoop: any EventLoop, _ channel: any Channel) {
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in self?.fire(eventLoop, channel) }
    }

    private func fire(_ eventLoop: any EventLoop, _ channel: any Channel) {
        timer = nil
        guard let due else { return }
        guard due <= .now() else { return arm(at: due, eventLoop, channel) }
        expire(channel)
    }

    private func expire(_ channel: any Channel) {
        due = nil
        metrics.requestTimeouts.increment()
        if headReceived, !answered, let context = partsContext {
            let head = HTTPResponse(status: .requestTimeout, headerFields: [.connection: "close", .contentLength: "0"])
            context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
            context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
        }
        channel.close(promise: nil)
    }

    private func requestEnded() {
        due = nil
        limiter.releaseBody(reservedBodyBytes)
        reservedBodyBytes = 0
    }

    /// Before the HTTP decoder: bytes in, untouched.
    final class FirstByte: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private let deadline: RequestDeadline

        init(_ deadline: RequestDeadline) { self.deadline = deadline }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if unwrapInboundIn(data).readableBytes > 0 { deadline.firstByte(context) }
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadline.requestEnded()
            deadline.timer?.cancel()
            deadline.timer = nil
            context.fireChannelInactive()
        }
    }

    /// After the HTTP decoder: request parts in, response parts out.
    final class Parts: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        private let deadline: RequestDeadline
        /// The request was refused here: its parts go nowhere.
        private var discarding = false

        init(_ deadline: RequestDeadline) { self.deadline = deadline }

        func handlerAdded(context: ChannelHandlerContext) { deadline.partsContext = context }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part = unwrapInboundIn(data)
            switch part {
            case .head(let head):
                deadline.headReceived = true
                deadline.answered = false
                let bytes = Self.bodyBytes(head.headerFields)
                guard deadline.limiter.reserveBody(bytes) else {
                    discarding = true
                    deadline.metrics.limitRefusals.increment()
                    let answer = HTTPResponse(
                        status: .serviceUnavailable,
                        headerFields: [.connection: "close", .contentLength: "0", .retryAfter: "1"]
                    )
                    context.write(wrapOutboundOut(.head(answer)), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                    return
                }
                deadline.reservedBodyBytes = bytes
            case .body:
                break
            case .end:
                deadline.requestEnded()
            }
            if !discarding { context.fireChannelRead(data) }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head: deadline.answered = true
            case .body, .end: break
            }
            context.write(data, promise: promise)
        }

        /// The share of the body budget a request takes: its declared length
        /// (bounded by the most any route reads), or that most when undeclared.
        static func bodyBytes(_ fields: HTTPFields) -> Int {
            if let length = fields[.contentLength] {
                guard let value = Int(length), value >= 0 else { return RequestDeadline.undeclaredBodyBytes }
                return min(value, RequestDeadline.undeclaredBodyBytes)
            }
            return fields[.transferEncoding] == nil ? 0 : RequestDeadline.undeclaredBodyBytes
        }
    }
}
