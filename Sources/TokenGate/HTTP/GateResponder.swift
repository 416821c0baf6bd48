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
///
/// A class: the answer of a request from the event loop runs in a task that
/// holds the responder, and holding a reference is one retain where a copy
/// of every field is a dozen.
final class GateResponder: HTTPResponder, Sendable {
    typealias Context = BasicRequestContext

    let gate: AuthGate
    let reader: GateRequestReader
    let reports: ReportEndpoints
    /// `POST`/`GET /v1/playback`: the CDN exchange (404 without `--cdn-profile`).
    let playback: PlaybackEndpoints?
    /// `GET /v1/manifest/{path}`: the manifest route (nil without a manifest profile).
    let manifests: ManifestEndpoint?
    /// With `serve --debugger` (loopback only): the debugger's `/debugger` and below.
    let mounted: (any MountedRoutes)?
    let metrics: GateMetrics
    let readiness: Readiness
    /// With `--otlp-endpoint`: where each decision's span goes (docs/DESIGN.md#span-export).
    let spans: SpanExporter?
    let logger: Logger
    /// The `Date` of the answers written from the event loop.
    let dates = HTTPDate()
    /// Which endpoints are there (``GateRoute/Mounts``).
    private let mounts: GateRoute.Mounts

    init(
        gate: AuthGate,
        reader: GateRequestReader,
        reports: ReportEndpoints,
        playback: PlaybackEndpoints?,
        manifests: ManifestEndpoint? = nil,
        mounted: (any MountedRoutes)?,
        metrics: GateMetrics,
        readiness: Readiness,
        spans: SpanExporter? = nil,
        logger: Logger
    ) {
        self.gate = gate
        self.reader = reader
        self.reports = reports
        self.playback = playback
        self.manifests = manifests
        self.mounted = mounted
        self.metrics = metrics
        self.readiness = readiness
        self.spans = spans
        self.logger = logger
        mounts = GateRoute.Mounts(playback: playback != nil, manifests: manifests != nil, debugger: mounted)
    }

    /// The framework's way: every route but those ``DirectAnswerHandler``
    /// answers on the event loop (a responder used without that handler, as
    /// HummingbirdTesting's router mode uses it, answers those the same way).
    func respond(to request: Request, context: Context) async throws -> Response {
        let route = GateRoute(request.head, mounts: mounts)
        return await observed(route, request.head) { await answer(route, request) }
    }

    /// The event loop's way (docs/DESIGN.md#answers-written-from-the-event-loop):
    /// the answer of an auth route, the manifest route or a playback route,
    /// made by a task that ``DirectAnswerHandler`` starts on the connection's
    /// event loop once it has read the request's body up to the route's
    /// bound. Nil for every other route, which the framework answers.
    func answerOnTheLoop(_ head: HTTPRequest) -> DirectAnswerHandler.Claim? {
        let route = GateRoute(head, mounts: mounts)
        guard route.isAnsweredOnTheLoop else { return nil }
        return DirectAnswerHandler.Claim(bodyLimit: route.bodyLimit) { [self] body in
            metrics.directAnswers.increment()
            var answer = await observed(route, head) { await answerOnTheLoop(route, head, body) }
            answer.head.headerFields[.date] = dates.text(at: TokenTimestamp.now())
            return answer
        }
    }

    /// What wraps every answer, whichever way it leaves, as a middleware
    /// would: the in-flight gauge, the endpoint's duration, the request's
    /// trace around its answer (docs/DESIGN.md#trace-context), and with span
    /// export its span, finished with the answer's status.
    private func observed<Answer: HasStatus>(
        _ route: GateRoute,
        _ head: HTTPRequest,
        _ answering: () async -> Answer
    ) async -> Answer {
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        let trace = RequestTrace(
            traceParents: head.headerFields[values: GateHeaders.traceParent],
            traceStates: spans == nil ? [] : head.headerFields[values: GateHeaders.traceState],
            sampler: spans?.sampler
        )
        let answer = await RequestTrace.$current.withValue(trace) { await answering() }
        if let spans, let span = trace.span?.finished(identity: trace.spanIdentity, httpStatus: Int(answer.status.code)) {
            spans.submit(span)
        }
        metrics.requestEnded(route.endpoint, since: start)
        return answer
    }

    private func answerOnTheLoop(_ route: GateRoute, _ head: HTTPRequest, _ body: RequestBody) async -> GateAnswer {
        switch route {
        case .auth(let auth):
            return await authorize(head, auth)
        case .manifest:
            let (outcome, answer) = await manifests!.respond(head)
            record(outcome, endpoint: .manifest, method: head.method)
            return answer
        case .playback:
            let (outcome, answer) = await playback!.respond(head, body: body)
            record(outcome, endpoint: .playback, method: head.method)
            return answer
        case .renew:
            let (outcome, answer) = playback!.renew(head, body: body)
            record(outcome, endpoint: .renew, method: head.method)
            return answer
        default:
            return GateAnswer.plain(.notFound, "not found\n")
        }
    }

    private func answer(_ route: GateRoute, _ request: Request) async -> Response {
        switch route {
        case .auth, .manifest, .playback, .renew:
            return await answerOnTheLoop(route, request.head, Self.body(of: request, upTo: route.bodyLimit)).response
        case .verify:
            return await reports.verify(request)
        case .inspect:
            return await reports.inspect(request)
        case .probeMethodNotAllowed:
            return Self.methodNotAllowed(allow: "GET, HEAD")
        case .healthz:
            return Self.plain(.ok, "ok\n")
        case .readyz:
            let notReady = await readiness.notReadyReason()
            // Still ready with a sample key trusted, or after a failed reload, but the body says so
            // (docs/DESIGN.md#sample-keys, docs/DESIGN.md#key-reloads).
            return Self.json(notReady == nil ? .ok : .serviceUnavailable, Self.readiness(notReady: notReady, warning: readiness.warning))
        case .metrics:
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.render()))
            )
        case .mounted:
            return await mounted!.respond(to: request)
        case .notFound:
            return Self.plain(.notFound, "not found\n")
        }
    }

    /// The body as ``DirectAnswerHandler`` would have gathered it, for a
    /// request of those routes that came the framework's way (router-mode tests).
    private static func body(of request: Request, upTo limit: Int?) async -> RequestBody {
        guard let limit else { return .dropped }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit { return .overLimit }
        var request = request
        do { return .whole(try await request.collectBody(upTo: limit)) } catch { return .overLimit }
    }

    private func authorize(_ head: HTTPRequest, _ route: AuthRoute) async -> GateAnswer {
        guard route.answers(head.method) else {
            return GateAnswer.methodNotAllowed(allow: "GET, HEAD")
        }
        // Envoy (any method) forwards the original request's method; the
        // other conventions report it in X-Forwarded-Method.
        let gateRequest = reader.read(
            originalURI: route.originalURI,
            headers: head.headerFields,
            now: gate.clock(),
            method: route.readsOnly ? nil : head.method.rawValue
        )
        let answer = await gate.decide(gateRequest)
        record(answer, endpoint: route.endpoint, headers: head.headerFields)
        if spans != nil, let span = RequestTrace.current?.span {
            span.decided(
                SpanDecision(
                    method: head.method.rawValue,
                    route: GateRoute.template(of: route.endpoint),
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
                    route: GateRoute.template(of: endpoint),
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

    static func render(_ answer: GateDecision) -> GateAnswer {
        let renewedName = answer.renewedCATHeader.flatMap { HTTPField.Name($0.name) }
        // A response that carries a credential is nobody's to cache.
        let carriesCredential = answer.session != nil || answer.setCookie != nil || renewedName != nil
        // Appended once each, in this order: the subscript setter would search the fields for every name.
        var headers: HTTPFields = [:]
        headers.reserveCapacity(10)
        headers.append(HTTPField(name: GateHeaders.status, value: answer.status.rawValue))
        headers.append(HTTPField(name: .cacheControl, value: carriesCredential ? "no-store, private" : "no-store"))
        // For the proxy's access log; every shipped site keeps it from clients.
        headers.append(
            HTTPField(name: GateHeaders.reason, value: HeaderValue.encode(answer.headerReason, maximumBytes: HeaderValue.maximumReasonBytes))
        )
        if let allowance = answer.allowance {
            headers.append(HTTPField(name: GateHeaders.kind, value: allowance.kind))
            headers.append(HTTPField(name: GateHeaders.requestor, value: allowance.requestor))
            headers.append(HTTPField(name: GateHeaders.resource, value: allowance.resource))
            headers.append(HTTPField(name: GateHeaders.mvpd, value: allowance.mvpd))
            headers.append(HTTPField(name: GateHeaders.expires, value: allowance.expires))
        }
        if let session = answer.session { headers.append(HTTPField(name: GateHeaders.session, value: session)) }
        if let cookie = answer.setCookie { headers.append(HTTPField(name: GateHeaders.setCookie, value: cookie)) }
        if let renewed = answer.renewedCATHeader, let renewedName {
            // The name is the CAT's own (catr): set, not appended, and never in Cache-Control's place.
            headers[renewedName] = renewed.value
            headers[.cacheControl] = "no-store, private"
        }
        return GateAnswer(status: .init(code: answer.status.httpStatus), headers: headers)
    }

    /// The resource a refused request was for: the gate's own, or the one the proxy named.
    private func expectedResource(_ request: GateRequest) -> String? {
        if case .fixed(let resource) = gate.configuration.resource { return resource }
        return request.resource
    }

    /// The framework's answers of the endpoints that still build a `Response`.
    static func methodNotAllowed(allow: String) -> Response { GateAnswer.methodNotAllowed(allow: allow).response }
    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response { GateAnswer.plain(status, text).response }
    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response { GateAnswer.json(status, text).response }

    /// `/readyz`'s body: `{"ready":false,"reason":…}`, or `{"ready":true}` with a `warning` when there is one.
    static func readiness(notReady reason: String?, warning: String?) -> String {
        var json = JSONWriter(capacity: 128, controlEscapes: .unicode)
        json.beginObject()
        json.member("ready")
        json.bool(reason == nil)
        if let reason {
            json.member("reason")
            json.string(reason)
        } else if let warning {
            json.member("warning")
            json.string(warning)
        }
        json.endObject()
        json.raw("\n")
        return json.text
    }
}

/// An answer's status, for what observes every answer (``GateResponder``'s `observed`).
protocol HasStatus {
    var status: HTTPResponse.Status { get }
}

extension Response: HasStatus {}

extension GateAnswer: HasStatus {
    var status: HTTPResponse.Status { head.status }
}
