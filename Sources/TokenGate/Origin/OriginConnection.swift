import NIOCore
import NIOHTTP1

/// One kept HTTP/1.1 connection to an origin, one request at a time: the
/// pool (``OriginHTTPClient``) hands it out, and takes it back only when
/// its last answer ended whole and the origin kept it alive.
final class OriginConnection: Sendable {
    let channel: any Channel
    private let collector: AnswerCollector

    init(channel: any Channel, collector: AnswerCollector) {
        self.channel = channel
        self.collector = collector
    }

    var isActive: Bool { channel.isActive }

    /// Writes `request` and waits for its answer; the deadline closes the
    /// connection, so a late answer can never be read as the next one's.
    func exchange(_ request: OriginRequest, deadline: NIODeadline) async -> Result<(OriginAnswer, keepAlive: Bool), OriginFailure> {
        await withCheckedContinuation { continuation in
            let eventLoop = channel.eventLoop
            let promise = eventLoop.makePromise(of: (OriginAnswer, Bool).self)
            promise.futureResult.whenComplete { result in
                continuation.resume(returning: result.map { ($0.0, keepAlive: $0.1) }.mapError { $0 as? OriginFailure ?? .connect("\($0)") })
            }
            eventLoop.execute { [channel, collector] in
                let timer = eventLoop.scheduleTask(deadline: deadline) {
                    promise.fail(OriginFailure.deadline)
                    channel.close(promise: nil)
                }
                promise.futureResult.whenComplete { _ in timer.cancel() }
                collector.expect(promise, maximumBytes: request.maximumBytes)
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: request.target)
                head.headers.add(name: "Host", value: request.hostField)
                head.headers.add(name: "User-Agent", value: "tokengate")
                head.headers.add(name: "Accept", value: "application/vnd.apple.mpegurl, application/dash+xml, */*;q=0.1")
                head.headers.add(name: "Accept-Encoding", value: "identity")
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { error in
                    promise.fail(OriginFailure.connect("\(error)"))
                }
            }
        }
    }

    func close() { channel.close(promise: nil) }
}

/// Reads one answer per request into a bounded buffer. A body over the
/// bound, an answer that does not end, or one that arrives unasked closes
/// the connection: it cannot be trusted for the next request.
final class AnswerCollector: ChannelInboundHandler, @unchecked Sendable {
    // Touched only on the channel's event loop.
    typealias InboundIn = HTTPClientResponsePart

    private var promise: EventLoopPromise<(OriginAnswer, Bool)>?
    private var maximumBytes = 0
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    func expect(_ promise: EventLoopPromise<(OriginAnswer, Bool)>, maximumBytes: Int) {
        self.promise = promise
        self.maximumBytes = maximumBytes
        head = nil
        body = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let promise else {
            context.close(promise: nil)
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let received):
            // 1xx answers are not ends; the decoder hands only final heads to a GET.
            if let length = received.headers.first(name: "Content-Length").flatMap(Int.init), length > maximumBytes {
                fail(.tooLarge(maximumBytes), context: context)
                return
            }
            head = received
            body.reserveCapacity(min(maximumBytes, received.headers.first(name: "Content-Length").flatMap(Int.init) ?? 16 * 1024))
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= maximumBytes else {
                fail(.tooLarge(maximumBytes), context: context)
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else {
                fail(.malformed("an end without a head"), context: context)
                return
            }
            self.promise = nil
            let answer = OriginAnswer(
                status: Int(head.status.code),
                cacheControl: head.headers[canonicalForm: "Cache-Control"].map(String.init).joined(separator: ", "),
                body: body
            )
            body = []
            promise.succeed((answer, head.isKeepAlive))
        }
    }

    private func fail(_ failure: OriginFailure, context: ChannelHandlerContext) {
        promise?.fail(failure)
        promise = nil
        body = []
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(OriginFailure.closedEarly)
        promise = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error is HTTPParserError ? .malformed("\(error)") : .connect("\(error)"), context: context)
    }
}
