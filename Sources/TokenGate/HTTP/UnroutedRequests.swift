import HTTPTypes
import Hummingbird

/// What a request the router's table does not take gets. ``GateRoutes`` adds
/// it after every route: Hummingbird applies a middleware to the routes added
/// after it and to the router's not-found answer, so this runs only when no
/// route matched both path and method. In order:
///
/// - a prefix route (``PrefixRoute``) whose prefix is the path or lies above
///   it takes the request, whatever its method: the router matches one method
///   at a time, and Envoy's `ext_authz` forwards the original request's;
/// - a path the router serves, asked with a method it does not take, is 405
///   with the `Allow` field RFC 9110 §15.5.6 requires, listing the methods
///   its routes take (docs/openapi.yaml; schemathesis checks it);
/// - anything else is 404, in the gate's plain text rather than Hummingbird's
///   error body. The router's own not-found answer is never asked.
struct UnroutedRequests: RouterMiddleware {
    typealias Context = BasicRequestContext

    let prefixes: [PrefixRoute]
    /// The `Allow` value of each path the router serves, by the path as the
    /// router reads it (``RouterPath``: empty segments dropped).
    let allowed: [String: String]

    init(prefixes: [PrefixRoute], routes: [Router<Context>.RouteDescription]) {
        self.prefixes = prefixes
        // `routes` lists a path's methods sorted by name: "GET, HEAD", "GET, POST".
        self.allowed = Dictionary(grouping: routes, by: \.path.description)
            .mapValues { $0.map(\.method.rawValue).joined(separator: ", ") }
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        for route in prefixes where route.covers(path) {
            context.coreContext.endpointPath.value = route.prefix
            return await route.respond(request)
        }
        if let allow = allowed[RouterPath(path).description] {
            return GateEndpoints.methodNotAllowed(allow: allow)
        }
        return GateEndpoints.plain(.notFound, "not found\n")
    }
}

/// A route for a path and everything below it, any method: Envoy's
/// `/v1/ext-authz/…` and the debugger's `/debugger/…` (``MountedRoutes``).
struct PrefixRoute: Sendable {
    /// The path the route is counted under (``EndpointMetricsMiddleware``).
    let prefix: String
    let covers: @Sendable (String) -> Bool
    let respond: @Sendable (Request) async -> Response

    /// The path `prefix` exactly, or any path below `prefix/`; `//v1/ext-authz`
    /// is neither.
    init(prefix: String, respond: @escaping @Sendable (Request) async -> Response) {
        let below = prefix + "/"
        self.init(prefix: prefix, covers: { $0 == prefix || $0.hasPrefix(below) }, respond: respond)
    }

    init(prefix: String, covers: @escaping @Sendable (String) -> Bool, respond: @escaping @Sendable (Request) async -> Response) {
        self.prefix = prefix
        self.covers = covers
        self.respond = respond
    }
}
