import NIOCore
import NIOHTTP1
import NIOPosix

/// One OTLP/HTTP export: a `POST` of a protobuf body on a connection of its
/// own, within a deadline that covers the connect, the write and the answer
/// (https://opentelemetry.io/docs/specs/otlp/#otlphttp). The answer's status
/// is all that is read; its body is discarded as it arrives, so a receiver
/// that talks on costs nothing but the deadline.
///
/// A connection per batch: batches leave at most a few times a second, and a
/// connection that is never kept cannot be found half-closed by the next one.
struct OTLPHTTPPoster: Sendable {
    let endpoint: OTLPEndpoint
    var group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

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

    func post(_ body: [UInt8], deadline: Duration) async throws(Failure) {
        let deadline = TimeAmount.nanoseconds(max(1, deadline.nanoseconds))
        let result: Result<Int, Failure> = await withCheckedContinuation { continuation in
            let answered = group.next().makePromise(of: Int.self)
            answered.futureResult.whenComplete { result in
                continuation.resume(returning: result.mapError { $0 as? Failure ?? .connect(String(describing: $0)) })
            }
            let bootstrap = ClientBootstrap(group: answered.futureResult.eventLoop)
                .connectTimeout(deadline)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(StatusReader(answered: answered))
                    }
                }
            let timer = answered.futureResult.eventLoop.scheduleTask(in: deadline) { answered.fail(Failure.deadline) }
            answered.futureResult.whenComplete { _ in timer.cancel() }
            bootstrap.connect(host: endpoint.host, port: endpoint.port).whenComplete { connected in
                switch connected {
                case .failure(let error):
                    answered.fail(Failure.connect(String(describing: error)))
                case .success(let channel):
                    answered.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: endpoint.path)
                    head.headers.add(name: "Host", value: endpoint.hostField)
                    head.headers.add(name: "Content-Type", value: "application/x-protobuf")
                    head.headers.add(name: "Content-Length", value: String(body.count))
                    head.headers.add(name: "Connection", value: "close")
                    channel.write(HTTPClientRequestPart.head(head), promise: nil)
                    channel.write(HTTPClientRequestPart.body(.byteBuffer(channel.allocator.buffer(bytes: body))), promise: nil)
                    channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                }
            }
        }
        switch result {
        case .success(let status) where (200..<300).contains(status): return
        case .success(let status): throw .status(status)
        case .failure(let failure): throw failure
        }
    }
}

/// Reads the answer's status; drops its body; an answer that ends, or a
/// connection that closes, settles the export.
private final class StatusReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    let answered: EventLoopPromise<Int>
    private var status: Int?

    init(answered: EventLoopPromise<Int>) {
        self.answered = answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body: break
        case .end:
            if let status { answered.succeed(status) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answered.fail(OTLPHTTPPoster.Failure.closedEarly)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answered.fail(OTLPHTTPPoster.Failure.connect(String(describing: error)))
        context.close(promise: nil)
    }
}
