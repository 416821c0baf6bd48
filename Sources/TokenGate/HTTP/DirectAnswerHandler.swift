import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Writes the auth endpoints' answers from the connection's event loop
/// (``GateResponder/answerDirectly(_:)``, docs/DESIGN.md#answers-written-from-the-event-loop):
/// those decided without waiting in the read that brought the request; those
/// that verify a token or a CAT from a task started on the loop
/// (`Task.immediate`), which runs to the end in that read unless the replay
/// store makes it wait, and then resumes on the loop with the store's reply.
/// Every other request, and every request with a body, goes on to the
/// framework unchanged.
///
/// HTTP/1.1 answers in order. A request is answered here only while no
/// request handed to the framework on this connection is still unanswered
/// (its answer's end has not passed on the way out); otherwise it is handed
/// on too. While an answer here waits for the store, nothing more is read
/// from the connection, and what the last read brought waits behind it. An
/// answer to a request that said `Connection: close` closes the connection
/// once written, as the framework does; a close asked for while an answer
/// waits (the server's idle timeout, a shutdown) comes after that answer.
///
/// A peer that sends requests and reads no answers gets the framework's
/// back-pressure: once the connection is not writable (the answers queued
/// reach the high watermark) requests are handed on, and the framework's
/// writer waits, and its reader stops reading.
///
/// After the request deadline's and the drain's handlers (so both see these
/// answers as they see the framework's) and before the framework's own.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// How a request is answered here.
    enum Answer {
        /// Decided without waiting.
        case now(HTTPResponse)
        /// After a verification, which may wait for the replay store.
        case afterVerifying(@Sendable () async -> HTTPResponse)
    }

    private let answer: (HTTPRequest) -> Answer?
    /// Where a verification resumes after a wait: the connection's event
    /// loop (``ConnectionExecutor``), or nil for Swift's pool (`TOKENGATE_EXECUTOR=pool`).
    private let makeExecutor: ((any EventLoop) -> any TaskExecutor)?
    private var executor: (any TaskExecutor)?
    /// Requests handed to the framework whose answers have not ended yet.
    private var unansweredOnward = 0
    /// The parts after a head handed on go the same way, up to its end.
    private var handingOn = false
    /// A bodiless head held for its end, to be answered here if it can be; and as it came.
    private var held: (head: HTTPRequest, data: NIOAny)?
    /// An answer here waits for its verification.
    private var verifying = false
    /// What arrived while an answer waited, in order: at most what one read brought,
    /// since no read is asked for meanwhile.
    private var waiting = CircularBuffer<NIOAny>()
    /// A read asked for while an answer waited, asked for once it is written.
    private var readWithheld = false
    /// A close asked for while an answer waited, done once it is written.
    private var closeWithheld: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
    /// Inside `channelRead`: an answer written now is flushed at the read's end.
    private var reading = false
    /// A part went on to the framework while what waited was taken: it hears of a read's end.
    private var handedOn = false
    private var closing = false
    private var written = false

    init(answer: @escaping (HTTPRequest) -> Answer?, executor: ((any EventLoop) -> any TaskExecutor)? = nil) {
        self.answer = answer
        makeExecutor = executor
    }

    func handlerAdded(context: ChannelHandlerContext) {
        executor = makeExecutor?(context.eventLoop)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }  // after `Connection: close`, as the framework: nothing more is read
        if verifying { return waiting.append(data) }
        reading = true
        defer { reading = false }
        take(context, data)
    }

    private func take(_ context: ChannelHandlerContext, _ data: NIOAny) {
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
            guard let (head, headData) = held else { return handOn(context, part, data) }
            held = nil
            switch answer(head) {
            case nil:
                handOn(context, .head(head), headData)
                handOn(context, part, data)
            case .now(let response):
                write(context, response, to: head)
            case .afterVerifying(let verification):
                verify(context, head, verification)
            }
        }
    }

    /// Runs the verification on a task of its own that starts here, in this
    /// read: with the in-memory store it ends before `Task.immediate` returns.
    private func verify(
        _ context: ChannelHandlerContext,
        _ head: HTTPRequest,
        _ verification: @escaping @Sendable () async -> HTTPResponse
    ) {
        verifying = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        Task.immediate(executorPreference: executor) {
            let response = await verification()
            if loop.inEventLoop {
                bound.value.handler.verified(bound.value.context, response, to: head)
            } else {
                loop.execute { bound.value.handler.verified(bound.value.context, response, to: head) }
            }
        }
    }

    /// The answer after its verification: written, then what waited behind it taken in order.
    private func verified(_ context: ChannelHandlerContext, _ response: HTTPResponse, to head: HTTPRequest) {
        verifying = false
        write(context, response, to: head)
        guard !reading else { return }  // ended in the read that brought it: the read's end flushes
        handedOn = false
        // As in a read: an answer that ends at once is flushed below, not re-entering here.
        reading = true
        while !verifying, !closing, let data = waiting.popFirst() { take(context, data) }
        reading = false
        if closing { waiting.removeAll() }
        if handedOn { context.fireChannelReadComplete() }
        flushWritten(context)
        guard !verifying else { return }
        if let (mode, promise) = closeWithheld {
            closeWithheld = nil
            context.close(mode: mode, promise: promise)
        } else if readWithheld {
            readWithheld = false
            context.read()
        }
    }

    private func write(_ context: ChannelHandlerContext, _ answer: HTTPResponse, to head: HTTPRequest) {
        var response = answer
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

    func channelReadComplete(context: ChannelHandlerContext) {
        flushWritten(context)
        context.fireChannelReadComplete()
    }

    /// One flush for the answers written since the last.
    private func flushWritten(_ context: ChannelHandlerContext) {
        guard written else { return }
        written = false
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        guard !verifying else {
            readWithheld = true
            return
        }
        context.read()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard verifying, context.channel.isActive else { return context.close(mode: mode, promise: promise) }
        guard let withheld = closeWithheld else {
            closeWithheld = (mode, promise)
            return
        }
        let widest: CloseMode = withheld.mode == .all || mode == .all ? .all : withheld.mode
        if let promise, let earlier = withheld.promise {
            earlier.futureResult.cascade(to: promise)
            closeWithheld = (widest, earlier)
        } else {
            closeWithheld = (widest, withheld.promise ?? promise)
        }
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
        handedOn = true
        context.fireChannelRead(data)
    }

    /// No `Content-Length` other than 0 and no `Transfer-Encoding`: the
    /// decoder's end follows the head in the same read.
    static func hasNoBody(_ head: HTTPRequest) -> Bool {
        !head.headerFields.contains { $0.name == .transferEncoding || ($0.name == .contentLength && $0.value != "0") }
    }
}
