internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import RedisRESP
internal import Synchronization

/// One open, logged-in connection: a channel and its RESP handler.
final class RedisConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<RESPConnectionHandler>
    let load: ConnectionLoad
    private let nextRequestID = Atomic<UInt64>(1)

    private init(channel: any Channel, handler: NIOLoopBound<RESPConnectionHandler>, load: ConnectionLoad) {
        self.channel = channel
        self.handler = handler
        self.load = load
    }

    /// Sends `command` (already encoded), after `prelude` in the same write
    /// when given; the future completes by `deadline`. `id` names the request
    /// for ``cancel(_:)`` (0: never cancelled).
    func send(
        _ command: [UInt8],
        id: UInt64 = 0,
        budgetedBytes: Int?,
        deadline: NIODeadline,
        prelude: [UInt8]? = nil,
        afterReply: AfterReply = .nothing
    ) -> EventLoopFuture<RESPReply> {
        let promise = channel.eventLoop.makePromise(of: RESPReply.self)
        if channel.eventLoop.inEventLoop {
            handler.value.send(
                command,
                id: id,
                budgetedBytes: budgetedBytes,
                promise: promise,
                deadline: deadline,
                prelude: prelude,
                afterReply: afterReply
            )
        } else {
            channel.eventLoop.execute { [handler] in
                handler.value.send(
                    command,
                    id: id,
                    budgetedBytes: budgetedBytes,
                    promise: promise,
                    deadline: deadline,
                    prelude: prelude,
                    afterReply: afterReply
                )
            }
        }
        return promise.futureResult
    }

    /// Sends like ``send(_:id:budgetedBytes:deadline:prelude:afterReply:)``
    /// and waits for the reply; when the calling task is cancelled, the
    /// request fails with `cancelled` at once instead of at its deadline
    /// (the caller's deadline is the one deadline).
    func reply(
        _ command: [UInt8],
        budgetedBytes: Int?,
        deadline: NIODeadline,
        prelude: [UInt8]? = nil,
        afterReply: AfterReply = .nothing
    ) async throws -> RESPReply {
        let id = nextRequestID.add(1, ordering: .relaxed).oldValue
        let future = send(command, id: id, budgetedBytes: budgetedBytes, deadline: deadline, prelude: prelude, afterReply: afterReply)
        return try await withTaskCancellationHandler {
            try await future.get()
        } onCancel: {
            cancel(id)
        }
    }

    /// The caller of request `id` stopped waiting: fail it now (its reply, when it comes, is dropped).
    func cancel(_ id: UInt64) {
        if channel.eventLoop.inEventLoop {
            handler.value.cancel(id)
        } else {
            channel.eventLoop.execute { [handler] in handler.value.cancel(id) }
        }
    }

    func close() {
        channel.close(promise: nil)
    }

    /// Connects and has the connection's state machine set up TLS, log in
    /// (`AUTH`), select the database and `PING` (``RedisConnectionStartup``),
    /// all within the configuration's connect timeout.
    static func open(
        configuration: RedisClientConfiguration,
        sslContext: NIOSSLContext?,
        group: any EventLoopGroup,
        budget: OutstandingBudget
    ) -> EventLoopFuture<RedisConnection> {
        let endpoint = configuration.endpoint
        let startup = RedisConnectionStartup(
            endpoint: endpoint,
            tls: sslContext != nil,
            deadline: (NIODeadline.now() + configuration.connectTimeout.timeAmount).uptimeNanoseconds
        )
        let closeReason = RESPConnectionHandler.CloseReason()
        let load = ConnectionLoad()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout.timeAmount)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext { try addTLSHandlers(to: channel.pipeline.syncOperations, sslContext, endpoint) }
                    try channel.pipeline.syncOperations.addHandler(
                        RESPConnectionHandler(
                            endpointDescription: endpoint.description,
                            startup: startup,
                            stalledTimeout: configuration.stalledConnectionTimeout.timeAmount,
                            // The budget bounds callers; 16 more for the `ASKING` preludes sent with them.
                            maxQueued: configuration.maxOutstandingRequests + 16,
                            replyLimits: configuration.replyLimits,
                            budget: budget,
                            firstCloseReason: closeReason,
                            load: load
                        )
                    )
                }
            }
        return bootstrap.connect(host: endpoint.host, port: endpoint.port)
            .flatMapErrorThrowing { error in
                throw RedisClientError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectFailureWords.describe(error))")
            }
            .flatMap { channel in
                let connection: RedisConnection
                let started: EventLoopFuture<Void>
                do {
                    let handler = try channel.pipeline.syncOperations.handler(type: RESPConnectionHandler.self)
                    guard let future = handler.startedFuture else { throw ChannelPipelineError.notFound }
                    connection = RedisConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), load: load)
                    started = future
                } catch {
                    // The channel closed between connecting and here, its
                    // handlers gone: say why it closed (TLS refused…).
                    return channel.eventLoop.makeFailedFuture(
                        closeReason.value
                            ?? RedisClientError(.connectionClosed, "the connection to \(endpoint) closed as it opened")
                    )
                }
                // The machine closes the channel itself when the start-up fails.
                return started.map { connection }
            }
    }

    /// TLS to `endpoint`, one rule for every connection, sentinel subscriptions
    /// included: a name (`tls-server-name=`, or the host dialled when it is a
    /// name) is checked against the certificate's DNS names — by NIOSSL, which
    /// would also take an IP address SAN, and with `tls-server-name=` then by
    /// ``TLSServerNameCheck``, which takes the name alone and holds the login
    /// until it has; with no name, NIOSSL checks an IP address SAN against the
    /// address dialled.
    static func addTLSHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations,
        _ sslContext: NIOSSLContext,
        _ endpoint: RedisEndpoint
    ) throws {
        let serverHostname = endpoint.tlsServerName ?? (isIPAddress(endpoint.host) ? nil : endpoint.host)
        try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
        if let name = endpoint.tlsServerName {
            try pipeline.addHandler(TLSServerNameCheck(name: name, endpointDescription: endpoint.description))
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
