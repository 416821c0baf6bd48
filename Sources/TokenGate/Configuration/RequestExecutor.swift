/// Where a connection's request handling runs (`TOKENGATE_EXECUTOR`).
enum RequestExecutor: String, Sendable {
    /// On the connection's own event loop (the HTTP layer's `ConnectionExecutor`): the default.
    case eventLoop = "event-loop"
    /// On Swift's cooperative pool, hopping from and to the event loop per request.
    case pool
}
