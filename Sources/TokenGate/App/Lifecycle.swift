import Logging
import ServiceLifecycle

/// Runs the replay store's background work (the Redis client's `run()`: in
/// Cluster, its topology refresher) and closes its connections when the gate
/// shuts down. First in the service group, so it is told last: after the
/// HTTP server has finished its in-flight requests, which may still be waiting on the store.
struct ReplayStoreCloser: Service {
    /// Returns once the store is closed, after the group's graceful shutdown or cancellation.
    let serve: @Sendable () async -> Void

    func run() async throws {
        await serve()
    }
}

/// On graceful shutdown (SIGTERM): readiness answers 503 at once, and every
/// answer from then on closes its connection (``DrainingConnectionHandler``)
/// while the gate still accepts and answers; after the grace period this
/// service returns and the HTTP server (shut down after it, as services stop
/// in reverse order) closes its listener, closes each idle connection, and
/// closes each busy one after its answer (docs/DESIGN.md#operators).
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
