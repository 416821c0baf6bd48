import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Writes the answers the gate decides without waiting — a playback session,
/// or a refusal reached before any verification (``GateResponder/answerAtOnce(_:)``)
/// — from the connection's event loop, in the read that brought the request
/// (docs/DESIGN.md#answers-written-from-the-event-loop). Every other request,
/// and every request with a body, goes on to the framework unchanged.
///
/// A peer that sends requests and reads no answers gets the framework's
/// back-pressure: once the connection is not writable (the answers queued
/// reach the high watermark) requests are handed on, and the framework's
/// writer waits, and its reader stops reading.
///
/// HTTP/1.1 answers in order: a request is answered here only while no
/// request handed to the framework on this connection is still unanswered
/// (its answer's end has not passed on the way out); otherwise it is handed
/// on too. An answer to a request that said `Connection: close` closes the
/// connection once written, as the framework does.
///
/// After the request deadline's and the drain's handlers (so both see these
/// answers as they see the framework's) and before the framework's own.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answer: (HTTPRequest) -> HTTPResponse?
    /// Requests handed to the framework whose answers have not ended yet.
    private var unansweredOnward = 0
    /// The parts after a head handed on go the same way, up to its end.
    private var handingOn = false
    /// A bodiless head held for its end, to be answered here if it can be; and as it came.
    private var held: (head: HTTPRequest, data: NIOAny)?
    private var closing = false
    private var written = false

    init(answer: @escaping (HTTPRequest) -> HTTPResponse?) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }  // after `Connection: close`, as the framework: nothing more is read
        // What is handed on goes as it came (`data`), not unwrapped and wrapped again.
        let part = unwrapInboundIn(data)
        if handingOn { return handOn(context, part, data) }
        switch part {
        // Not while the peer leaves answers unread: behind the framework's async writer, a
        // connection that stops reading stops being read, so answers queue only to the watermark.
        case .head(let head) where unansweredOnward == 0 && context.channel.isWritable && Self.hasNoBody(head):
            held = (head, data)
        case .head:
            handOn(context, part, data)
        case .body:
            // A body after a head that announced none: the framework decides what that is.
            handOnHeld(context)
            handOn(context, part, data)
        case .end:
            guard let (head, _) = held else { return handOn(context, part, data) }
            guard var response = answer(head) else {
                handOnHeld(context)
                return handOn(context, part, data)
            }
            held = nil
            response.headerFields[.contentLength] = "0"
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if head.headerFields[.connection] == "close" {
                closing = true
                let ended = context.eventLoop.makePromise(of: Void.self)
                ended.futureResult.whenComplete { _ in context.close(promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: ended)
            } else {
                context.write(wrapOutboundOut(.end(nil)), promise: nil)
                written = true
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if written {
            written = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Clamped: the framework's answer to a request it could not parse answers nothing handed on.
        if case .end = unwrapOutboundIn(data) { unansweredOnward = max(0, unansweredOnward - 1) }
        context.write(data, promise: promise)
    }

    private func handOnHeld(_ context: ChannelHandlerContext) {
        guard let (head, data) = held else { return }
        held = nil
        handOn(context, .head(head), data)
    }

    private func handOn(_ context: ChannelHandlerContext, _ part: HTTPRequestPart, _ data: NIOAny) {
        switch part {
        case .head:
            unansweredOnward += 1
            handingOn = true
        case .end:
            handingOn = false
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    /// No `Content-Length` other than 0 and no `Transfer-Encoding`: the
    /// decoder's end follows the head in the same read.
    static func hasNoBody(_ head: HTTPRequest) -> Bool {
        !head.headerFields.contains { $0.name == .transferEncoding || ($0.name == .contentLength && $0.value != "0") }
    }
}
