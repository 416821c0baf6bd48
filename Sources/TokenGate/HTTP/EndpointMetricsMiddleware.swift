import Hummingbird

/// The in-flight gauge and the per-endpoint duration of every request, routed
/// or not. The endpoint is the route the router matched
/// (`context.endpointPath`, which Hummingbird sets before the route's
/// middleware runs, and ``UnroutedRequests`` for the prefix routes): its
/// label is the last segment of the route's path (`/v1/auth-request` is
/// `auth-request`), so a route declared in ``GateRoutes`` names its own
/// metric; a request no route takes (404, 405) is `other`.
struct EndpointMetricsMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let metrics: GateMetrics

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        defer {
            metrics.inFlight.decrement()
            metrics.recordDuration(Self.endpoint(route: context.endpointPath), ContinuousClock.now - start)
        }
        return try await next(request, context)
    }

    /// The metric label of a route path as the router describes it.
    static func endpoint(route path: String?) -> GateMetrics.Endpoint {
        guard let path, let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return .other }
        return GateMetrics.Endpoint(rawValue: String(path[path.index(after: slash)...])) ?? .other
    }
}
