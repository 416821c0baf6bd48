import EntitlementTokens
import HTTPTypes
import Hummingbird
import Logging

/// The gate's HTTP face: one responder that routes on the path (the auth
/// endpoints take any path below `/v1/ext-authz/` and, for Envoy, any
/// method), asks ``AuthGate`` and renders the answer of docs/DESIGN.md#endpoints-and-answers.
///
/// Every answer carries `X-Token-Status` and `Cache-Control: no-store`; an
/// allow also carries the `X-Token-*` values; bodies are empty on the auth
/// endpoints (a proxy reads the status and headers only).
struct GateResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let gate: AuthGate
    let reader: GateRequestReader
    let reports: ReportEndpoints
    /// `POST`/`GET /v1/playback`: the CDN exchange (404 without `--cdn-profile`).
    let playback: PlaybackEndpoints?
    /// `GET /v1/manifest/{path}`: the manifest route (nil without a manifest profile).
    var manifests: ManifestEndpoint? = nil
    /// With `serve --debugger` (loopback only): the debugger's `/debugger` and below.
    let mounted: (any MountedRoutes)?
    let metrics: GateMetrics
    let readiness: Readiness
    /// With `--otlp-endpoint`: where each decision's span goes (docs/DESIGN.md#span-export).
    var spans: SpanExporter? = nil
    let logger: Logger
    /// The `Date` of the answers written from the event loop.
    let dates = HTTPDate()

    static let extAuthzPrefix = "/v1/ext-authz"

    /// Every request is served in its trace (docs/DESIGN.md#trace-context):
    /// what is logged about it names the caller's `traceparent`, or a new trace.
    /// With span export, the span is finished when the answer is ready.
    func respond(to request: Request, context: Context) async throws -> Response {
        let trace = trace(of: request.headers)
        let response = await RequestTrace.$current.withValue(trace) { await route(request) }
        finish(trace, status: response.status)
        return response
    }

    /// A request's trace: the caller's `traceparent` (and `tracestate`, kept only for an exported span).
    private func trace(of headers: HTTPFields) -> RequestTrace {
        RequestTrace(
            traceParents: headers[values: GateHeaders.traceParent],
            traceStates: spans == nil ? [] : headers[values: GateHeaders.traceState],
            recordsSpan: spans != nil
        )
    }

    /// With span export, the request's span is finished with the answer's status and sent.
    private func finish(_ trace: RequestTrace, status: HTTPResponse.Status) {
        if let spans, let span = trace.span?.finished(identity: trace.spanIdentity, httpStatus: Int(status.code)) {
            spans.submit(span)
        }
    }

    private func route(_ request: Request) async -> Response {
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        let path = request.uri.path
        let endpoint: GateMetrics.Endpoint
        let response: Response
        if let auth = AuthRoute(path: path[...], head: request.head) {
            endpoint = auth.endpoint
            response = await authorize(request.head, auth)
        } else {
            switch path {
            case "/v1/verify":
                endpoint = .verify
                response = await reports.verify(request)
            case "/v1/inspect":
                endpoint = .inspect
                response = await reports.inspect(request)
            case "/v1/playback" where playback != nil:
                endpoint = .playback
                let (outcome, answer) = await playback!.respond(request)
                record(outcome, endpoint: endpoint, method: request.method)
                response = answer
            case "/v1/playback/renew" where playback != nil:
                endpoint = .renew
                let (outcome, answer) = await playback!.renew(request)
                record(outcome, endpoint: endpoint, method: request.method)
                response = answer
            case _ where manifests != nil && path.hasPrefix(ManifestEndpoint.prefix):
                endpoint = .manifest
                let (outcome, answer) = await manifests!.respond(request)
                record(outcome, endpoint: endpoint, method: request.method)
                response = answer
            case _ where Self.probes.contains(path) && !Self.readMethods.contains(request.method):
                endpoint = .other
                response = Self.methodNotAllowed(allow: "GET, HEAD")
            case "/healthz":
                endpoint = .healthz
                response = Self.plain(.ok, "ok\n")
            case "/readyz":
                endpoint = .readyz
                if let reason = await readiness.notReadyReason() {
                    response = Self.json(.serviceUnavailable, "{\"ready\":false,\"reason\":\(JSONText.quoted(reason))}\n")
                } else {
                    // Still ready with a sample key trusted, or after a failed reload, but the body says so
                    // (docs/DESIGN.md#sample-keys, docs/DESIGN.md#key-reloads).
                    response = Self.json(
                        .ok,
                        readiness.warning.map { "{\"ready\":true,\"warning\":\(JSONText.quoted($0))}\n" }
                            ?? "{\"ready\":true}\n"
                    )
                }
            case "/metrics":
                endpoint = .metrics
                response = Response(
                    status: .ok,
                    headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.render()))
                )
            case _ where mounted?.handles(path) == true:
                endpoint = .debugger
                response = await mounted!.respond(to: request)
            default:
                endpoint = .other
                response = Self.plain(.notFound, "not found\n")
            }
        }
        metrics.requestEnded(endpoint, since: start)
        return response
    }

    /// An auth endpoint (docs/DESIGN.md#endpoints-and-answers) and what it reads the original request from.
    struct AuthRoute {
        let endpoint: GateMetrics.Endpoint
        let originalURI: Substring?
        /// GET and HEAD only (the proxies' subrequests); else any method (Envoy checks the original request's).
        let readsOnly: Bool

        /// Whether it answers `method`.
        func answers(_ method: HTTPRequest.Method) -> Bool { !readsOnly || method == .get || method == .head }

        /// `path`: the request's path without its query.
        init?(path: Substring, head: HTTPRequest) {
            switch path {
            case "/v1/auth-request":
                (endpoint, originalURI, readsOnly) = (.authRequest, head.headerFields[GateHeaders.originalURI]?[...], true)
            case "/v1/forward-auth":
                (endpoint, originalURI, readsOnly) = (.forwardAuth, head.headerFields[GateHeaders.forwardedURI]?[...], true)
            case _ where path == GateResponder.extAuthzPrefix || path.hasPrefix(GateResponder.extAuthzPrefix + "/"):
                // Envoy appends the original path (and query) to the prefix, and
                // checks any method: the original request's.
                let original = (head.path ?? String(path)).dropFirst(GateResponder.extAuthzPrefix.count)
                (endpoint, originalURI, readsOnly) = (.extAuthz, original.isEmpty ? "/" : original, false)
            default:
                return nil
            }
        }
    }

    private func authorize(_ head: HTTPRequest, _ route: AuthRoute) async -> Response {
        guard route.answers(head.method) else {
            return Self.methodNotAllowed(allow: "GET, HEAD")
        }
        let gateRequest = read(head, route)
        return conclude(await gate.decide(gateRequest), of: gateRequest, route: route, head: head)
    }

    /// The gate's reading of an auth request. Envoy (any method) forwards
    /// the original request's method; the other conventions report it in X-Forwarded-Method.
    private func read(_ head: HTTPRequest, _ route: AuthRoute) -> GateRequest {
        reader.read(
            originalURI: route.originalURI,
            headers: head.headerFields,
            now: gate.clock(),
            method: route.readsOnly ? nil : head.method.rawValue
        )
    }

    /// An auth answer's metrics, log line and span, and the answer.
    private func conclude(_ answer: GateDecision, of gateRequest: GateRequest, route: AuthRoute, head: HTTPRequest) -> Response {
        record(answer, endpoint: route.endpoint, headers: head.headerFields)
        if spans != nil, let span = RequestTrace.current?.span {
            span.decided(
                SpanDecision(
                    method: head.method.rawValue,
                    route: Self.route(of: route.endpoint),
                    status: answer.status.rawValue,
                    reason: answer.reason,
                    resource: answer.allowance?.resource ?? expectedResource(gateRequest),
                    tokenID: answer.tokenID,
                    kind: answer.kindLabel
                )
            )
        }
        return Self.render(answer)
    }

    /// The answer of an auth endpoint, for ``DirectAnswerHandler`` on the
    /// connection's event loop (docs/DESIGN.md#answers-written-from-the-event-loop),
    /// with everything ``respond(to:context:)`` does around it: the trace, the
    /// span, the metrics, the log line. At once when the gate decides without
    /// waiting (a playback session, or a refusal before any verification);
    /// after the verification when a token or a CAT must be verified, which
    /// may ask the replay store. Nil for every other request (another path, a
    /// method the endpoint does not answer), which takes the framework's way.
    func answerDirectly(_ head: HTTPRequest) -> DirectAnswerHandler.Answer? {
        let target = head.path ?? ""
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...]
        guard let route = AuthRoute(path: path, head: head), route.answers(head.method) else { return nil }
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        metrics.directAnswers.increment()
        let gateRequest = read(head, route)
        let trace = trace(of: head.headerFields)
        switch gate.open(gateRequest) {
        case .decided(let answer):
            let response = RequestTrace.$current.withValue(trace) { conclude(answer, of: gateRequest, route: route, head: head) }
            return .now(directly(response, trace: trace, endpoint: route.endpoint, since: start))
        case .verify(let pending):
            return .afterVerifying { [self] in
                let response = await RequestTrace.$current.withValue(trace) {
                    conclude(await gate.verify(gateRequest, pending), of: gateRequest, route: route, head: head)
                }
                return directly(response, trace: trace, endpoint: route.endpoint, since: start)
            }
        }
    }

    /// A direct answer's head, once its span, gauge and duration are done: the framework's fields and a `Date`.
    private func directly(
        _ response: Response,
        trace: RequestTrace,
        endpoint: GateMetrics.Endpoint,
        since start: ContinuousClock.Instant
    ) -> HTTPResponse {
        finish(trace, status: response.status)
        metrics.requestEnded(endpoint, since: start)
        var head = response.head
        head.headerFields[.date] = dates.text(at: TokenTimestamp.now())
        return head
    }

    /// Metrics for every answer; one log line for every refusal, never with the token or the URI that carries it.
    private func record(_ answer: GateDecision, endpoint: GateMetrics.Endpoint, headers: HTTPFields) {
        metrics.countVerdict(answer.status, kind: answer.kindLabel)
        switch answer.status {
        case .validSession: metrics.countSession(.valid)
        case .sessionExpired: metrics.countSession(.expired)
        case .invalidSession: metrics.countSession(.invalid)
        default: break
        }
        if answer.session != nil { metrics.countSession(.issued) }
        if answer.catRenewed { metrics.catRenewals.increment() }
        if answer.catReuseDetected {
            // catreplay 2: reuse is allowed, and someone should see it.
            metrics.catReuse.increment()
            logger.notice(
                "CAT presented again (catreplay 2)",
                metadata: [
                    "token_id": .string(answer.tokenID ?? "-"), "endpoint": .string(endpoint.rawValue),
                ]
            )
        }
        guard !answer.status.isAllowed else { return }
        var metadata: Logger.Metadata = [
            "status": .string(answer.status.rawValue),
            "reason": .string(answer.reason),
            "token_id": .string(answer.tokenID ?? "-"),
            "endpoint": .string(endpoint.rawValue),
        ]
        if endpoint == .forwardAuth {
            if let method = headers[GateHeaders.forwardedMethod] { metadata["method"] = .string(HeaderValue.encode(method)) }
            if let host = headers[GateHeaders.forwardedHost] { metadata["host"] = .string(HeaderValue.encode(host)) }
        }
        logger.notice("refused", metadata: metadata)
    }

    /// An exchange's metrics, and a refusal's log line as the auth routes
    /// write one (the token by its fingerprint, never the token). An allow is
    /// counted and not logged, as the auth routes' allows: a line per playback
    /// start cost 5% of an exchange (docs/PERFORMANCE.md).
    private func record(_ outcome: PlaybackExchange.Outcome, endpoint: GateMetrics.Endpoint, method: HTTPRequest.Method) {
        if spans != nil, let span = RequestTrace.current?.span {
            span.decided(
                SpanDecision(
                    method: method.rawValue,
                    route: Self.route(of: endpoint),
                    status: outcome.decision.status.rawValue,
                    reason: outcome.decision.reason,
                    resource: outcome.decision.allowance?.resource,
                    tokenID: outcome.decision.tokenID,
                    kind: outcome.decision.kindLabel,
                    profile: outcome.profile
                )
            )
        }
        if outcome.session != nil { metrics.countSession(.issued) }
        // Exchanges are counted by profile; a renewal or a manifest by its route's duration and verdict.
        if endpoint == .playback {
            metrics.countExchange(profile: outcome.profile, kind: outcome.kind, status: outcome.decision.status.rawValue)
        }
        metrics.countVerdict(outcome.decision.status, kind: outcome.decision.kindLabel)
        guard outcome.grant == nil else { return }
        logger.notice(
            "refused",
            metadata: [
                "status": .string(outcome.decision.status.rawValue),
                "reason": .string(outcome.decision.reason),
                "token_id": .string(outcome.decision.tokenID ?? "-"),
                "endpoint": .string(endpoint.rawValue),
                "profile": .string(HeaderValue.encode(outcome.profile)),
            ]
        )
    }

    static func render(_ answer: GateDecision) -> Response {
        var headers: HTTPFields = [:]
        headers.reserveCapacity(10)
        headers[GateHeaders.status] = answer.status.rawValue
        headers[.cacheControl] = "no-store"
        // For the proxy's access log; every shipped site keeps it from clients.
        headers[GateHeaders.reason] = HeaderValue.encode(answer.headerReason, maximumBytes: HeaderValue.maximumReasonBytes)
        if let allowance = answer.allowance {
            headers[GateHeaders.kind] = allowance.kind
            headers[GateHeaders.requestor] = allowance.requestor
            headers[GateHeaders.resource] = allowance.resource
            headers[GateHeaders.mvpd] = allowance.mvpd
            headers[GateHeaders.expires] = allowance.expires
        }
        if let session = answer.session {
            headers[GateHeaders.session] = session
            // A response that carries a credential is nobody's to cache.
            headers[.cacheControl] = "no-store, private"
        }
        if let cookie = answer.setCookie {
            headers[GateHeaders.setCookie] = cookie
            headers[.cacheControl] = "no-store, private"
        }
        if let renewed = answer.renewedCATHeader, let name = HTTPField.Name(renewed.name) {
            headers[name] = renewed.value
            headers[.cacheControl] = "no-store, private"
        }
        return Response(status: .init(code: answer.status.httpStatus), headers: headers)
    }

    /// The resource a refused request was for: the gate's own, or the one the proxy named.
    private func expectedResource(_ request: GateRequest) -> String? {
        if case .fixed(let resource) = gate.configuration.resource { return resource }
        return request.resource
    }

    /// A decision span's `http.route`: the path, or the template of Envoy's prefix.
    static func route(of endpoint: GateMetrics.Endpoint) -> String {
        switch endpoint {
        case .authRequest: "/v1/auth-request"
        case .forwardAuth: "/v1/forward-auth"
        case .extAuthz: extAuthzPrefix + "/{path}"
        case .playback: "/v1/playback"
        case .renew: "/v1/playback/renew"
        case .manifest: ManifestEndpoint.prefix + "{path}"
        default: "/" + endpoint.rawValue
        }
    }

    /// The methods of the proxy endpoints and the probes.
    static let readMethods: Set<HTTPRequest.Method> = [.get, .head]
    static let probes: Set<String> = ["/healthz", "/readyz", "/metrics"]

    /// 405 with the `Allow` field RFC 9110 §15.5.6 requires (docs/openapi.yaml; schemathesis checks it).
    static func methodNotAllowed(allow: String) -> Response {
        var response = plain(.methodNotAllowed, "use \(allow)\n")
        response.headers[.allow] = allow
        return response
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}
