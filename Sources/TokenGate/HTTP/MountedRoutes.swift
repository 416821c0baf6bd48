import Hummingbird

/// Routes served beside the gate's own below a path prefix — the web
/// debugger under `serve --debugger`. The HTTP layer mounts them by this
/// protocol and never names what they are, so the debugger (a front end
/// above it) can use the HTTP layer's helpers without a cycle.
protocol MountedRoutes: Sendable {
    /// Whether `path` is one of these routes.
    func handles(_ path: String) -> Bool
    /// The answer for a request whose path ``handles(_:)``.
    func respond(to request: Request) async -> Response
}
