import CDNTokens
import EntitlementTokens
import HTTPTypes
import Hummingbird

/// `GET /v1/manifest/{path}` (docs/DESIGN.md#the-manifest-route): reads the
/// request for ``ManifestService`` and renders its answer. A player that
/// keeps no cookies carries its session in the query (`tgs`); every other
/// query parameter goes to the origin as sent (a low-latency player's
/// `_HLS_msn`, say). The rewritten manifest is the viewer's own:
/// `Cache-Control: private, no-store`.
struct ManifestEndpoint: Sendable {
    static let prefix = "/v1/manifest/"

    let service: ManifestService
    let deviceHeader: HTTPField.Name
    let clock: @Sendable () -> TokenTimestamp

    func respond(_ request: Request) async -> (PlaybackExchange.Outcome, Response) {
        guard request.method == .get || request.method == .head else {
            let refusal = GateDecision(status: .badRequest, reason: "the method is not GET or HEAD", kindLabel: "none")
            return (.refused(refusal), GateResponder.methodNotAllowed(allow: "GET, HEAD"))
        }
        let configuration = service.gate.configuration
        let path = String(request.uri.path.dropFirst(Self.prefix.count - 1))
        let (sessionValues, query) = Self.split(query: request.uri.query.map { $0[...] }, taking: ManifestScope.sessionName)
        let deviceLines = request.headers[values: deviceHeader]
        guard deviceLines.count <= 1 else {
            let reason = "the request has more than one \(deviceHeader.rawName) field: it reads two ways"
            return (.refused(GateDecision(status: .badRequest, reason: reason, kindLabel: "none")), Self.refusal(.badRequest, reason: reason))
        }
        let ipHeaders = Set(service.profiles.current.profiles.map(\.settings.ipHeader))
        let clientIPs = ipHeaders.compactMap { HTTPField.Name($0) }.flatMap { request.headers[values: $0] }
        let answer = await service.serve(
            .init(
                path: path,
                query: query,
                sessions: sessionValues.map { .init(value: $0, carrier: .query(ManifestScope.sessionName)) },
                deviceID: deviceLines.first.flatMap { $0.isEmpty ? nil : $0 },
                clientIPs: clientIPs,
                now: clock()
            )
        )
        let decision = answer.outcome.decision
        guard decision.status.isAllowed else {
            return (answer.outcome, Self.refusal(decision.status, reason: decision.headerReason))
        }
        var headers: HTTPFields = [:]
        headers[GateHeaders.status] = decision.status.rawValue
        headers[.cacheControl] = "private, no-store"
        headers[.contentType] = answer.contentType
        // Casting receivers fetch manifests from a page of another origin; the
        // answer holds no cookie and asks for none.
        headers[.accessControlAllowOrigin] = "*"
        let body = request.method == .head ? ByteBuffer() : ByteBuffer(bytes: answer.body)
        headers[.contentLength] = String(answer.body.count)
        return (answer.outcome, Response(status: .ok, headers: headers, body: .init(byteBuffer: body)))
    }

    /// The session parameter's values, and the rest of the query as sent
    /// (nil when nothing is left), in one pass over its pairs.
    static func split(query: Substring?, taking name: String) -> (values: [Substring], rest: String?) {
        guard let query, !query.isEmpty else { return ([], nil) }
        var values: [Substring] = []
        var kept: [Substring] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let key = pair.prefix { $0 != "=" }
            if key.utf8.elementsEqual(name.utf8), key.endIndex < pair.endIndex {
                let value = pair[pair.index(after: key.endIndex)...]
                if !value.isEmpty { values.append(value) }
            } else {
                kept.append(pair)
            }
        }
        return (values, kept.isEmpty ? nil : kept.joined(separator: "&"))
    }

    static func refusal(_ status: GateStatus, reason: String) -> Response {
        var response = PlaybackEndpoints.refusal(status: .init(code: status.httpStatus), tokenStatus: status.rawValue, reason: reason)
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
