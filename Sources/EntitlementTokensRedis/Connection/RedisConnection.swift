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
    func send(_ command: [UInt8], id: UInt64 = 0, budgetedBytes: Int?, deadline: NIODeadline,
              prelude: [UInt8]? = nil, afterReply: AfterReply = .nothing) -> EventLoopFuture<RESPReply> {
        let promise = channel.eventLoop.makePromise(of: RESPReply.self)
        if channel.eventLoop.inEventLoop {
            handler.value.send(command, id: id, budgetedBytes: budgetedBytes, promise: promise, deadline: deadline,
                               prelude: prelude, afterReply: afterReply)
        } else {
            channel.eventLoop.execute { [handler] in
                handler.value.send(command, id: id, budgetedBytes: budgetedBytes, promise: promise, deadline: deadline,
                                   prelude: prelude, afterReply: afterReply)
            }
        }
        return promise.futureResult
    }

    /// Sends like ``send(_:id:budgetedBytes:deadline:prelude:afterReply:)``
    /// and waits for the reply; when the calling task is cancelled, the
    /// request fails with `cancelled` at once instead of at its deadline
    /// (the caller's deadline is the one deadline).
    func reply(_ command: [UInt8], budgetedBytes: Int?, deadline: NIODeadline,
               prelude: [UInt8]? = nil, afterReply: AfterReply = .nothing) async throws -> RESPReply {
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

    /// Connects, sets up TLS, logs in (`AUTH`) and selects the database, all
    /// within the configuration's connect timeout.
    static func open(
        configuration: RedisClientConfiguration,
        sslContext: NIOSSLContext?,
        group: any EventLoopGroup,
        budget: OutstandingBudget
    ) -> EventLoopFuture<RedisConnection> {
        let endpoint = configuration.endpoint
        let deadline = NIODeadline.now() + configuration.connectTimeout.timeAmount
        let closeReason = RESPConnectionHandler.CloseReason()
        let load = ConnectionLoad()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout.timeAmount)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext { try addTLSHandlers(to: channel.pipeline.syncOperations, sslContext, endpoint) }
                    try channel.pipeline.syncOperations.addHandler(RESPConnectionHandler(
                        endpointDescription: endpoint.description,
                        stalledTimeout: configuration.stalledConnectionTimeout.timeAmount,
                        // The budget bounds callers; 16 more for the connection's own AUTH/SELECT/PING and ASKING preludes.
                        maxQueued: configuration.maxOutstandingRequests + 16,
                        replyLimits: configuration.replyLimits,
                        budget: budget,
                        firstCloseReason: closeReason,
                        load: load))
                }
            }
        return bootstrap.connect(host: endpoint.host, port: endpoint.port)
            .flatMapErrorThrowing { error in
                throw RedisClientError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectFailureWords.describe(error))")
            }
            .flatMap { channel in
                channel.eventLoop.makeCompletedFuture {
                    do {
                        let handler = try channel.pipeline.syncOperations.handler(type: RESPConnectionHandler.self)
                        return RedisConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), load: load)
                    } catch {
                        // The channel closed between connecting and here, its
                        // handlers gone: say why it closed (TLS refused…).
                        throw closeReason.value
                            ?? RedisClientError(.connectionClosed, "the connection to \(endpoint) closed as it opened")
                    }
                }
            }
            .flatMap { (connection: RedisConnection) -> EventLoopFuture<RedisConnection> in
                connection.logIn(endpoint, deadline: deadline).flatMapThrowing { @Sendable () throws -> RedisConnection in
                    connection
                }.flatMapErrorThrowing { @Sendable error throws -> RedisConnection in
                    connection.close()
                    throw error
                }
            }
    }

    /// `AUTH`, `SELECT` and a `PING`, pipelined: the connection counts as
    /// open only once the server has answered through it (TLS handshake,
    /// login and database included).
    private func logIn(_ endpoint: RedisEndpoint, deadline: NIODeadline) -> EventLoopFuture<Void> {
        var steps: [EventLoopFuture<Void>] = []
        func step(_ command: RESPCommand, failure: RedisClientError.Code) {
            steps.append(send(command.encoded(), budgetedBytes: nil, deadline: deadline).flatMapThrowing { reply in
                if case .error(let message) = reply,
                   message.starts(with: "NOAUTH".utf8) || message.starts(with: "WRONGPASS".utf8) {
                    throw RedisClientError(.authenticationFailed, endpoint.password == nil
                        ? "\(endpoint) wants a password (give one with password-file=, or in the URL): \(reply.summary)"
                        : "\(endpoint) refused the login: \(reply.summary)")
                }
                guard reply.isOK || (command.name == "PING" && reply == .simpleString(Array("PONG".utf8))) else {
                    throw RedisClientError(failure, "\(endpoint) refused \(command.name): \(reply.summary)")
                }
            })
        }
        if let password = endpoint.password {
            step(endpoint.username.map { RESPCommand("AUTH", $0, password) } ?? RESPCommand("AUTH", password),
                 failure: .authenticationFailed)
        }
        if endpoint.database != 0 {
            step(RESPCommand("SELECT", String(endpoint.database)), failure: .databaseSelectionFailed)
        }
        step(RESPCommand("PING"), failure: .unexpectedReply)
        return EventLoopFuture.andAllSucceed(steps, on: channel.eventLoop)
    }

    /// TLS to `endpoint`, one rule for every connection, sentinel subscriptions
    /// included: a name (`tls-server-name=`, or the host dialled when it is a
    /// name) is checked against the certificate's DNS names — by NIOSSL, which
    /// would also take an IP address SAN, and with `tls-server-name=` then by
    /// ``TLSServerNameCheck``, which takes the name alone and holds the login
    /// until it has; with no name, NIOSSL checks an IP address SAN against the
    /// address dialled.
    static func addTLSHandlers(to pipeline: ChannelPipeline.SynchronousOperations, _ sslContext: NIOSSLContext,
                               _ endpoint: RedisEndpoint) throws {
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
