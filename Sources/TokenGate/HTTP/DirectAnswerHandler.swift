import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers the routes the gate answers from the connection's event loop
/// (the auth routes, the manifest route and the playback routes,
/// ``GateRoute/isAnsweredOnTheLoop``;
/// docs/DESIGN.md#answers-written-from-the-event-loop): every request to
/// them, and only here. The answer is made by a task whose job goes on the
/// connection's event loop behind the reads of the loop's turn: every
/// connection the loop found readable is read first, then the answers are made
/// one after another, each written and flushed as it ends. Made back to back,
/// the verifications keep their code and data in the core's caches, where one
/// made inside each read shared them with the HTTP layer's work of every other
/// request (docs/PERFORMANCE.md). A task that the replay store or a manifest's
/// origin makes wait resumes on the loop with the reply. Every other request
/// goes on to the framework unchanged.
///
/// HTTP/1.1 answers in order. A request of these routes is answered once
/// every request handed to the framework before it has its answer's end on
/// the way out, and while the connection is writable (a peer that sends
/// requests and reads no answers gets back-pressure: nothing more is read
/// until it reads). Until then, and while its answer is made, nothing more
/// is read from the connection after the read that started the answer, and
/// what arrived meanwhile waits behind it. A body is read up to the route's bound and handed to its answer (the
/// playback routes' small JSON), or dropped (the routes that judge the head);
/// past the bound it is dropped and the answer told so. An answer to
/// a request that said `Connection: close` closes the connection once
/// written, as the framework does; a close asked for while an answer waits
/// (the server's idle timeout, a shutdown) comes after that answer.
///
/// After the request deadline's and the drain's handlers (so both see these
/// answers as they see the framework's) and before the framework's own.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Makes the answer of a request this handler answers, from its body.
    typealias Answering = @Sendable (RequestBody) async -> GateAnswer

    /// A request this handler answers: how much of its body is read, and how its answer is made.
    struct Claim: Sendable {
        /// The most body bytes read; nil: the body is dropped (the route judges the head).
        var bodyLimit: Int?
        var answer: Answering
    }

    /// A claimed request being read, its body gathered up to the claim's bound.
    private struct Reading {
        var head: HTTPRequest
        var claim: Claim
        var gathered: ByteBuffer?
        var overLimit: Bool

        var body: RequestBody {
            guard claim.bodyLimit != nil else { return .dropped }
            return overLimit ? .overLimit : .whole(gathered ?? ByteBuffer())
        }
    }

    /// ``GateResponder/answerOnTheLoop(_:)``: nil for a request the framework answers.
    private let claim: (HTTPRequest) -> Claim?
    /// Where an answer resumes after a wait: the connection's event
    /// loop (``ConnectionExecutor``), or nil for Swift's pool (`TOKENGATE_EXECUTOR=pool`).
    private let makeExecutor: ((any EventLoop) -> any TaskExecutor)?
    private var executor: (any TaskExecutor)?
    /// Requests handed to the framework whose answers have not ended yet.
    private var unansweredOnward = 0
    /// The parts after a head handed on go the same way, up to its end.
    private var handingOn = false
    /// A request of these routes being read, up to its end.
    private var reading: Reading?
    /// One read to its end, waiting for its turn (the framework's answers before it, a writable connection).
    private var queued: (head: HTTPRequest, answering: Answering, body: RequestBody)?
    /// Its answer is being made.
    private var answering = false
    /// What arrived while an answer waited, in order: at most what two reads brought
    /// (``readLetThrough``), since no other read is asked for meanwhile.
    private var waiting = CircularBuffer<NIOAny>()
    /// A read asked for while an answer waited, asked for once it is written.
    private var readWithheld = false
    /// The answer was started in this read: the read asked for at its end goes
    /// through, once. Its job runs before the loop reads again, so what that read
    /// brings comes after the answer unless the answer waits (then it waits
    /// behind it, and the next read is withheld). Withheld instead, the loop
    /// would stop watching the socket and watch it again for every answer: two
    /// `epoll_ctl` calls a request.
    private var readLetThrough = false
    /// A close asked for while an answer waited, done once it is written.
    private var closeWithheld: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
    /// Inside `channelRead`: an answer written now is flushed at the read's end.
    private var inRead = false
    /// A part went on to the framework while what waited was taken: it hears of a read's end.
    private var handedOn = false
    private var closing = false
    private var written = false

    /// Whether an answer is waiting for its turn or being made.
    private var busy: Bool { queued != nil || answering }

    init(answer claim: @escaping (HTTPRequest) -> Claim?, executor: ((any EventLoop) -> any TaskExecutor)? = nil) {
        self.claim = claim
        makeExecutor = executor
    }

    func handlerAdded(context: ChannelHandlerContext) {
        executor = makeExecutor?(context.eventLoop)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }  // after `Connection: close`, as the framework: nothing more is read
        if busy { return waiting.append(data) }
        inRead = true
        defer { inRead = false }
        take(context, data)
    }

    private func take(_ context: ChannelHandlerContext, _ data: NIOAny) {
        // What is handed on goes as it came (`data`), not unwrapped and wrapped again.
        let part = unwrapInboundIn(data)
        if handingOn { return handOn(context, part, data) }
        if var request = reading {
            // The decoder ends a request before the next head: a body part is gathered or dropped, the end queues it.
            reading = nil  // so the gathered buffer is held once while it grows
            switch part {
            case .body(var chunk):
                if let limit = request.claim.bodyLimit, !request.overLimit {
                    if (request.gathered?.readableBytes ?? 0) + chunk.readableBytes > limit {
                        request.overLimit = true
                        request.gathered = nil
                    } else if request.gathered == nil {
                        request.gathered = chunk
                    } else {
                        request.gathered!.writeBuffer(&chunk)
                    }
                }
                reading = request
            case .head:
                reading = request
            case .end:
                queued = (request.head, request.claim.answer, request.body)
                answerIfItsTurn(context)
            }
            return
        }
        if case .head(let head) = part, let claimed = claim(head) {
            // A declared length past the bound is known at once: nothing of it is kept.
            let declared = head.headerFields[.contentLength].flatMap { Int($0) } ?? 0
            reading = Reading(head: head, claim: claimed, gathered: nil, overLimit: declared > (claimed.bodyLimit ?? .max))
        } else {
            handOn(context, part, data)
        }
    }

    /// Starts the queued request's answer once the framework's answers before
    /// it have ended and the connection takes writes; else it waits for
    /// that end (``write(context:data:promise:)``) or for writability.
    private func answerIfItsTurn(_ context: ChannelHandlerContext) {
        guard !answering, unansweredOnward == 0, context.channel.isWritable, let (head, answer, body) = queued else { return }
        queued = nil
        answering = true
        readLetThrough = inRead
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        Task(executorPreference: executor) {
            let made = await answer(body)
            if loop.inEventLoop {
                bound.value.handler.answered(bound.value.context, made, to: head)
            } else {
                loop.execute { bound.value.handler.answered(bound.value.context, made, to: head) }
            }
        }
    }

    /// The answer, written; then what waited behind it, taken in order.
    private func answered(_ context: ChannelHandlerContext, _ answer: GateAnswer, to head: HTTPRequest) {
        answering = false
        readLetThrough = false
        write(context, answer, to: head)
        // Never inside a read: the answer's job is enqueued, so it runs after
        // the read (and the drain below) that started it has returned.
        assert(!inRead, "an answer's job ran inside a read")
        handedOn = false
        // As in a read: an answer that ends at once is flushed below, not re-entering here.
        inRead = true
        while !busy, !closing, let data = waiting.popFirst() { take(context, data) }
        inRead = false
        // An answer started from what waited lets no read through: each would add a read's worth behind it.
        readLetThrough = false
        if closing { waiting.removeAll() }
        if handedOn { context.fireChannelReadComplete() }
        flushWritten(context)
        guard !busy else { return }
        if let (mode, promise) = closeWithheld {
            closeWithheld = nil
            context.close(mode: mode, promise: promise)
        } else if readWithheld {
            readWithheld = false
            context.read()
        }
    }

    private func write(_ context: ChannelHandlerContext, _ answer: GateAnswer, to request: HTTPRequest) {
        var head = answer.head
        // A HEAD's answer names the length its GET's would have; the others, their own.
        // Appended where absent: the subscript setter would search the fields again.
        if head.headerFields[.contentLength] == nil {
            head.headerFields.append(HTTPField(name: .contentLength, value: String(answer.body.readableBytes)))
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if request.method != .head, answer.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(answer.body)), promise: nil)
        }
        if request.headerFields[.connection] == "close" {
            closing = true
            let ended = context.eventLoop.makePromise(of: Void.self)
            ended.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: ended)
        } else {
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
            written = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, queued != nil { answerIfItsTurn(context) }
        context.fireChannelWritabilityChanged()
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
        reading = nil
        queued = nil
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if busy {
            guard readLetThrough else {
                readWithheld = true
                return
            }
            readLetThrough = false
        }
        context.read()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard busy, context.channel.isActive else { return context.close(mode: mode, promise: promise) }
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
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        // Clamped: the framework's answer to a request it could not parse answers nothing handed on.
        unansweredOnward = max(0, unansweredOnward - 1)
        context.write(data, promise: promise)
        // A request queued behind this answer takes its turn once this write is done with.
        if unansweredOnward == 0, queued != nil {
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.handler.answerIfItsTurn(bound.value.context) }
        }
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
}
