import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The manifest route's HTTP/1.1 client (docs/DESIGN.md#the-manifest-route):
/// kept connections per origin, TLS with the system's roots (or
/// `--manifest-origin-ca`), one deadline over connect, write and answer, and
/// a byte bound on the body. A connection is used by one request at a time;
/// at most `maximumConnections` are open to one origin, and a request past
/// that is `busy` at once rather than queued without bound.
final class OriginHTTPClient: ManifestOrigin {
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
    }

    private struct Pool {
        var idle: [OriginConnection] = []
        var open = 0
    }

    let group: any EventLoopGroup
    let maximumConnections: Int
    let maximumIdle: Int
    private let tls: NIOSSLContext?
    private let pools = Mutex<[Origin: Pool]>([:])

    init(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        trustRootsFile: String? = nil,
        maximumConnections: Int = 64,
        maximumIdle: Int = 16
    ) throws {
        self.group = group
        self.maximumConnections = maximumConnections
        self.maximumIdle = maximumIdle
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let trustRootsFile { configuration.trustRoots = .file(trustRootsFile) }
        tls = try NIOSSLContext(configuration: configuration)
    }

    func fetch(_ request: OriginRequest) async -> Result<OriginAnswer, OriginFailure> {
        do { return .success(try await fetchOnce(request)) } catch { return .failure(error) }
    }

    private func fetchOnce(_ request: OriginRequest) async throws(OriginFailure) -> OriginAnswer {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(clamping: request.deadline.nanoseconds))
        let origin = Origin(scheme: request.scheme, host: request.host, port: request.port)
        // A kept connection the origin closed while it idled fails before any
        // answer: a GET is then tried once more, on a new connection.
        for attempt in 0..<2 {
            let (connection, reused) = try await checkOut(origin, deadline: deadline)
            let result = await connection.exchange(request, deadline: deadline)
            switch result {
            case .success(let (answer, keepAlive)):
                checkIn(connection, to: origin, keep: keepAlive)
                return answer
            case .failure(let failure):
                checkIn(connection, to: origin, keep: false)
                if reused, attempt == 0, failure == .closedEarly || failure.isConnect { continue }
                throw failure
            }
        }
        throw .closedEarly
    }

    private func checkOut(_ origin: Origin, deadline: NIODeadline) async throws(OriginFailure) -> (OriginConnection, reused: Bool) {
        enum Step {
            case reuse(OriginConnection)
            case connect
            case busy
        }
        let step: Step = pools.withLock { pools in
            var pool = pools[origin, default: Pool()]
            defer { pools[origin] = pool }
            while let connection = pool.idle.popLast() {
                if connection.isActive { return .reuse(connection) }
                pool.open -= 1
            }
            guard pool.open < maximumConnections else { return .busy }
            pool.open += 1
            return .connect
        }
        switch step {
        case .reuse(let connection): return (connection, true)
        case .busy: throw .busy
        case .connect:
            do { return (try await connect(origin, deadline: deadline), false) } catch {
                pools.withLock { $0[origin]?.open -= 1 }
                throw error
            }
        }
    }

    private func checkIn(_ connection: OriginConnection, to origin: Origin, keep: Bool) {
        let kept: Bool = pools.withLock { pools in
            guard keep, connection.isActive, var pool = pools[origin], pool.idle.count < maximumIdle else {
                pools[origin]?.open -= 1
                return false
            }
            pool.idle.append(connection)
            pools[origin] = pool
            return true
        }
        if !kept { connection.close() }
    }

    private func connect(_ origin: Origin, deadline: NIODeadline) async throws(OriginFailure) -> OriginConnection {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw .deadline }
        let tls = origin.scheme == "https" ? self.tls : nil
        let collector = AnswerCollector()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(remaining)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        // SNI and the certificate's name: the origin's host, never an address the viewer gave.
                        let serverName = origin.host.contains(":") || origin.host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : origin.host
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
        let result: Result<any Channel, OriginFailure> = await withCheckedContinuation { continuation in
            bootstrap.connect(host: origin.host, port: origin.port).whenComplete { result in
                continuation.resume(returning: result.mapError { OriginFailure.connect("\($0)") })
            }
        }
        return OriginConnection(channel: try result.get(), collector: collector)
    }
}

extension OriginFailure {
    fileprivate var isConnect: Bool {
        if case .connect = self { true } else { false }
    }
}
