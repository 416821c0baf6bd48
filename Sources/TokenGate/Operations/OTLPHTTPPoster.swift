import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// OTLP/HTTP exports (https://opentelemetry.io/docs/specs/otlp/#otlphttp):
/// each a `POST` of a protobuf body within a deadline that covers the
/// connect, the write and the answer, on one connection kept between
/// exports. The answer's status is all that is read; its body is discarded
/// as it arrives, so a receiver that talks on costs nothing but the deadline.
///
/// The connection is kept while the receiver keeps it (an HTTP/1.1 answer
/// without `Connection: close`) and every export on it ends in an answer.
/// A receiver may close a kept connection while it is idle, and the next
/// export then finds it closed before any answer: that export is sent once
/// more, on a new connection. A connection whose export ran out of time is
/// closed, never reused: its answer may still come.
final class OTLPHTTPPoster: Sendable {
    let endpoint: OTLPEndpoint
    let group: any EventLoopGroup
    /// The connection the last export ended on, when it can take the next.
    private let kept = Mutex<(any Channel)?>(nil)

    init(endpoint: OTLPEndpoint, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.endpoint = endpoint
        self.group = group
    }

    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case connect(String)
        case status(Int)
        case closedEarly
        case deadline

        var description: String {
            switch self {
            case .connect(let why): "could not connect: \(why)"
            case .status(let code): "the receiver answered \(code)"
            case .closedEarly: "the receiver closed the connection before it answered"
            case .deadline: "no answer within the deadline"
            }
        }
    }

    func post(_ body: ByteBuffer, deadline: Duration) async throws(Failure) {
        let deadline = NIODeadline.now() + .nanoseconds(max(1, deadline.nanoseconds))
        if let reused = kept.withLock({ $0.take() }), reused.isActive {
            do {
                return try await export(body, on: reused, deadline: deadline)
            } catch .closedEarly {
                // Closed while it was idle: the receiver may keep a connection
                // only so long. A new one is asked once; a second failure is the receiver's.
            }
        }
        let channel = try await connect(deadline: deadline)
        try await export(body, on: channel, deadline: deadline)
    }

    /// Closes the kept connection (at shutdown, after the last export).
    func close() {
        kept.withLock { $0.take() }?.close(promise: nil)
    }

    private func connect(deadline: NIODeadline) async throws(Failure) -> any Channel {
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(max(.nanoseconds(1), deadline - .now()))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExportHandler())
                }
            }
        do {
            return try await bootstrap.connect(host: endpoint.host, port: endpoint.port).get()
        } catch {
            throw .connect(String(describing: error))
        }
    }

    /// One export on `channel`; the channel is kept after it when the answer allows, else closed.
    private func export(_ body: ByteBuffer, on channel: any Channel, deadline: NIODeadline) async throws(Failure) {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: endpoint.path)
        head.headers.add(name: "Host", value: endpoint.hostField)
        head.headers.add(name: "Content-Type", value: "application/x-protobuf")
        head.headers.add(name: "Content-Length", value: String(body.readableBytes))
        let answered = channel.eventLoop.makePromise(of: ExportHandler.Answer.self)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            answered.fail(Failure.deadline)
            channel.close(promise: nil)
        }
        answered.futureResult.whenComplete { _ in timer.cancel() }
        let export = ExportHandler.Export(head: head, body: body, answered: answered)
        channel.writeAndFlush(export).whenFailure { _ in answered.fail(Failure.closedEarly) }
        let answer: ExportHandler.Answer
        do {
            answer = try await answered.futureResult.get()
        } catch {
            channel.close(promise: nil)
            throw error as? Failure ?? .connect(String(describing: error))
        }
        if answer.keepAlive {
            kept.withLock { $0 = channel }
        } else {
            channel.close(promise: nil)
        }
        guard (200..<300).contains(answer.status) else { throw .status(answer.status) }
    }
}

/// Writes an export's request and reads its answer: the status and whether
/// the connection may be kept; the body is dropped. The connection closing
/// before the answer's end fails the export.
private final class ExportHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Export
    typealias OutboundOut = HTTPClientRequestPart

    struct Export: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer
        let answered: EventLoopPromise<Answer>
    }

    struct Answer {
        let status: Int
        let keepAlive: Bool
    }

    private var answered: EventLoopPromise<Answer>?
    private var head: HTTPResponseHead?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let export = unwrapOutboundIn(data)
        answered = export.answered
        head = nil
        context.write(wrapOutboundOut(.head(export.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(export.body))), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received): head = received
        case .body: break
        case .end:
            guard let head else { return }
            answered?.succeed(Answer(status: Int(head.status.code), keepAlive: head.isKeepAlive))
            answered = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answered?.fail(OTLPHTTPPoster.Failure.closedEarly)
        answered = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answered?.fail(OTLPHTTPPoster.Failure.connect(String(describing: error)))
        answered = nil
        context.close(promise: nil)
    }
}
