import Logging
import ServiceLifecycle

/// Closes the replay store's connections when the gate shuts down. First in
/// the service group, so it is told last: after the HTTP server has finished
/// its in-flight requests, which may still be waiting on the store.
struct ReplayStoreCloser: Service {
    let shutdown: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}

/// On graceful shutdown (SIGTERM): readiness answers 503 at once, then after
/// the grace period this service returns and the HTTP server (shut down after
/// it, as services stop in reverse order) stops accepting and lets in-flight
/// requests finish.
struct DrainService: Service {
    let readiness: Readiness
    let grace: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        readiness.startDraining()
        logger.info("shutting down: readiness is 503", metadata: ["grace_seconds": .stringConvertible(grace.components.seconds)])
        try? await Task.sleep(for: grace)
    }
}
