import HTTPTypes
import Hummingbird

/// Serves every request in its trace (docs/DESIGN.md#trace-context): what is
/// logged about it names the caller's `traceparent`, or a new trace. The
/// first of the gate's middleware, so that a request no route takes is traced too.
struct RequestTraceMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    static let traceParent = HTTPField.Name("traceparent")!

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestTrace.$current.withValue(RequestTrace(traceParents: request.headers[values: Self.traceParent])) {
            try await next(request, context)
        }
    }
}
