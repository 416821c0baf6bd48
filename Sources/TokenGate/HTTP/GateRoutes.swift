import HTTPTypes
import Hummingbird

/// Every endpoint of the gate, declared on Hummingbird's `Router`
/// (docs/DESIGN.md#where-the-routes-are-declared): each route's path and
/// methods, and the middleware every request passes, in order:
///
/// 1. ``RequestTraceMiddleware``: the request's trace;
/// 2. ``EndpointMetricsMiddleware``: the in-flight gauge and the duration,
///    labelled by the route's last path segment;
/// 3. the route's handler, or ``UnroutedRequests`` when no route takes the
///    request: the prefix routes that take every method, 405, 404.
///
/// The request's deadline and its share of the body budget are not
/// middleware: they apply before the request reaches the router, in the
/// channel (``RequestDeadline``), because a head that never completes has no
/// request to route.
struct GateRoutes {
    let endpoints: GateEndpoints
    let reports: ReportEndpoints
    /// `POST`/`GET /v1/playback`: the CDN exchange (404 without `--cdn-profile`).
    let playback: PlaybackEndpoints?
    /// With `serve --debugger` (loopback only): the debugger's `/debugger` and below.
    let mounted: (any MountedRoutes)?

    func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: RequestTraceMiddleware())
        router.add(middleware: EndpointMetricsMiddleware(metrics: endpoints.metrics))

        // The proxies' auth endpoints (docs/DESIGN.md#endpoints-and-answers).
        router.get("/v1/auth-request") { request, _ in await endpoints.authRequest(request) }
        router.head("/v1/auth-request") { request, _ in await endpoints.authRequest(request) }
        router.get("/v1/forward-auth") { request, _ in await endpoints.forwardAuth(request) }
        router.head("/v1/forward-auth") { request, _ in await endpoints.forwardAuth(request) }

        // Reports: tokens in the body, never the replay store.
        router.post("/v1/verify") { request, _ in await reports.verify(request) }
        router.post("/v1/inspect") { request, _ in await reports.inspect(request) }

        // The CDN exchange. Not HEAD: a link checker's HEAD would spend the viewer's token.
        if let playback {
            router.get("/v1/playback") { request, _ in await endpoints.playback(request, playback) }
            router.post("/v1/playback") { request, _ in await endpoints.playback(request, playback) }
        }

        // The probes.
        router.get("/healthz") { _, _ in endpoints.healthz() }
        router.head("/healthz") { _, _ in endpoints.healthz() }
        router.get("/readyz") { _, _ in await endpoints.readyz() }
        router.head("/readyz") { _, _ in await endpoints.readyz() }
        router.get("/metrics") { _, _ in endpoints.metricsPage() }
        router.head("/metrics") { _, _ in endpoints.metricsPage() }

        // Last: it wraps only what no route above takes.
        router.add(middleware: UnroutedRequests(prefixes: prefixRoutes, routes: router.routes))
        return router
    }

    /// The routes that take a path and everything below it, with any method.
    var prefixRoutes: [PrefixRoute] {
        var routes: [PrefixRoute] = []
        // Envoy appends the original path (and query) to the prefix, and asks
        // with the original request's method.
        routes.append(PrefixRoute(prefix: GateEndpoints.extAuthzPrefix) { request in await endpoints.extAuthz(request) })
        if let mounted {
            routes.append(PrefixRoute(prefix: mounted.prefix, covers: { mounted.handles($0) }) { request in
                await mounted.respond(to: request)
            })
        }
        return routes
    }
}
