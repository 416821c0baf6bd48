import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Once the gate drains (SIGTERM, docs/DESIGN.md#operators), every answer
/// says `Connection: close` and its connection closes once the answer is
/// written. A proxy's kept-alive connection to a draining gate thus carries
/// at most one more request, and the proxy knows before it reuses it that
/// it is gone: when the listener closes at the end of the grace period,
/// hardly any idle connection is left for the proxy to send a request onto
/// as the server closes it (the one request a retry on another gate must
/// cover, docs/DEPLOY.md#rolling-a-fleet). A connection is never closed here
/// with a request read and unanswered: only after its answer's last byte.
///
/// After the HTTP decoder, on the connection's event loop; one atomic load
/// per answer while the gate serves.
final class DrainingConnectionHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let readiness: Readiness
    /// The answer being written said `Connection: close`.
    private var closeAfterAnswer = false

    init(readiness: Readiness) {
        self.readiness = readiness
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.kind != .informational && readiness.isDraining:
            closeAfterAnswer = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAfterAnswer:
            closeAfterAnswer = false
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }
}
