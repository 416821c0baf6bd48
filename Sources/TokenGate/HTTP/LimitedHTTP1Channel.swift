import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Hummingbird's HTTP/1 child channel with the gate's limits around it: each
/// accepted connection is admitted by the ``ConnectionLimiter`` (or closed at
/// once), gets a ``RequestDeadline`` before and after the HTTP decoder, and
/// a ``DrainingConnectionHandler`` that closes it after its answer once the
/// gate drains, and a ``DirectAnswerHandler`` that writes the answers of the auth, manifest
/// and playback routes from the event loop. The pipeline is the one Hummingbird's
/// `HTTP1Channel` builds, with ``HTTP1ToHTTPTypesCodec`` for NIOHTTPTypes' codec;
/// everything else — NIO's decoding, keep-alive, the idle timeout, the responder — is
/// the framework's, unchanged.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let configuration: HTTP1Channel.Configuration
    let requestTimeout: TimeAmount
    let limiter: ConnectionLimiter
    let metrics: GateMetrics
    let executor: RequestExecutor
    /// Whether the gate drains (SIGTERM), read per answer.
    let readiness: Readiness
    /// ``GateResponder/answerOnTheLoop(_:)``: how an answer written from the event loop is made, or nil.
    let answerOnTheLoop: @Sendable (HTTPRequest) -> DirectAnswerHandler.Claim?
    private let handling: HTTP1Channel

    init(
        responder: @escaping HTTPChannelHandler.Responder,
        configuration: HTTP1Channel.Configuration,
        requestTimeout: TimeAmount,
        limiter: ConnectionLimiter,
        metrics: GateMetrics,
        executor: RequestExecutor,
        readiness: Readiness,
        answerOnTheLoop: @escaping @Sendable (HTTPRequest) -> DirectAnswerHandler.Claim?
    ) {
        self.responder = responder
        self.configuration = configuration
        self.requestTimeout = requestTimeout
        self.limiter = limiter
        self.metrics = metrics
        self.executor = executor
        self.readiness = readiness
        self.answerOnTheLoop = answerOnTheLoop
        handling = HTTP1Channel(responder: responder, configuration: configuration)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard limiter.admit(channel) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let deadline = RequestDeadline(timeout: requestTimeout, limiter: limiter, metrics: metrics)
        let (firstByte, parts) = deadline.handlers()
        // A verification that waits resumes where the framework's requests run.
        let executor: (@Sendable (any EventLoop) -> any TaskExecutor)? =
            switch self.executor {
            case .eventLoop: { ConnectionExecutor(eventLoop: $0) }
            case .pool: nil
            }
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(firstByte)
            // The pipeline HTTP1Channel.setup builds, in its order, with the
            // gate's codec in place of NIOHTTPTypes' (HTTP1ToHTTPTypesCodec).
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = configuration.httpDecoder.maxHeaderFieldSize
            decoderLimits.maxHeaderListSize = configuration.httpDecoder.maxHeaderListSize
            decoderLimits.maxHeaderFieldCount = configuration.httpDecoder.maxHeaderFieldCount
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,  // the answers are ordered by the async channel and DirectAnswerHandler
                withErrorHandling: false,  // a malformed request is Hummingbird's to answer
                withOutboundHeaderValidation: false,  // HTTPTypes validated every field already
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: decoderLimits
            )
            try pipeline.addHandler(HTTP1ToHTTPTypesCodec())
            try pipeline.addHandlers([
                parts, DrainingConnectionHandler(readiness: readiness), DirectAnswerHandler(answer: answerOnTheLoop, executor: executor),
            ])
            try pipeline.addHandlers(configuration.additionalChannelHandlers())
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: configuration.idleTimeout.map { .init($0) }, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch executor {
        case .eventLoop:
            await withTaskExecutorPreference(ConnectionExecutor(eventLoop: value.channel.eventLoop)) {
                await handling.handle(value: value, logger: logger)
            }
        case .pool:
            await handling.handle(value: value, logger: logger)
        }
    }
}
