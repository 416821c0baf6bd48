import EntitlementTokens
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// `tokengate debugger`: the debugger's routes alone, with the keys loaded
/// once at start. No auth endpoints, no replay store, no cache, no metrics:
/// a support engineer's tool, not a gate.
final class DebuggerServer: Sendable {
    let configuration: DebuggerConfiguration
    let endpoints: DebuggerEndpoints
    let logger: Logger

    init(
        configuration: DebuggerConfiguration,
        logger: Logger,
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now
    ) throws(GateConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        let ring = try KeyRing.loadAtStart(paths: configuration.keyPaths, options: configuration.keyLoading)
        let hosts = DebuggerHosts(listenHost: configuration.host, port: configuration.port, allowedHosts: configuration.allowedHosts)
        endpoints = DebuggerEndpoints(keys: GateVerifier(ring: ring, policy: VerificationPolicy()), hosts: hosts, clock: clock)
    }

    /// The number of keys loaded.
    var keyCount: Int { endpoints.keys.keyCount }

    /// The HTTP application, on the configured address unless `port` overrides it (0: any free port).
    /// The `Host` names it answers to take the port actually bound.
    func application(
        port: Int? = nil,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let hosts = endpoints.hosts
        return Application(
            responder: DebuggerResponder(endpoints: endpoints),
            server: .http1(configuration: ServerLimits.http1),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: port ?? configuration.port),
                serverName: nil
            ),
            onServerRunning: { channel in
                hosts.bound(port: channel.localAddress?.port)
                await onServerRunning(channel)
            },
            logger: logger
        )
    }
}

/// Routes of the standalone debugger: `/` leads to the page.
struct DebuggerResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let endpoints: DebuggerEndpoints

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        if DebuggerEndpoints.handles(path) { return await endpoints.respond(to: request) }
        switch path {
        case "/":
            // The redirect names the page, so it answers the page's names only.
            guard endpoints.hosts.allows(request) else { return DebuggerHosts.refusal }
            var headers = DebuggerHeaders.fields(contentType: "text/plain; charset=utf-8")
            headers[.location] = DebuggerEndpoints.Path.page
            return Response(status: .seeOther, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "see /debugger\n")))
        case "/healthz":
            return DebuggerHeaders.response(.ok, contentType: "text/plain; charset=utf-8", "ok\n")
        default:
            return DebuggerHeaders.response(.notFound, contentType: "text/plain; charset=utf-8", "not found\n")
        }
    }
}
