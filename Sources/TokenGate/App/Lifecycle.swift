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
