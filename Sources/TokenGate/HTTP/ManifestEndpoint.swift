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

    /// `head`: the request's head; the route reads no body.
    func respond(_ head: HTTPRequest) async -> (PlaybackExchange.Outcome, GateAnswer) {
        guard head.method == .get || head.method == .head else {
            let refusal = GateDecision(status: .badRequest, reason: "the method is not GET or HEAD", kindLabel: "none")
            return (.refused(refusal), GateAnswer.methodNotAllowed(allow: "GET, HEAD"))
        }
        let target = GateRoute.originForm(of: head.path ?? "/")
        let pathAndQuery = GateRoute.path(of: target)
        let path = String(pathAndQuery.dropFirst(Self.prefix.count - 1))
        // The query as sent, without a fragment (a client should send none).
        // The path ends at `?` or `#`: only after a `?` is there a query.
        let afterPath = target[pathAndQuery.endIndex...]
        let query = afterPath.first == "?" ? afterPath.dropFirst().prefix { $0 != "#" } : nil
        let (sessionValues, rest) = Self.split(query: query, taking: ManifestScope.sessionName)
        let headers = head.headerFields
        let deviceLines = headers[values: deviceHeader]
        guard deviceLines.count <= 1 else {
            let reason = "the request has more than one \(deviceHeader.rawName) field: it reads two ways"
            return (.refused(GateDecision(status: .badRequest, reason: reason, kindLabel: "none")), Self.refusal(.badRequest, reason: reason))
        }
        let ipHeaders = Set(service.profiles.current.profiles.map(\.settings.ipHeader))
        let clientIPs = ipHeaders.compactMap { HTTPField.Name($0) }.flatMap { headers[values: $0] }
        let answer = await service.serve(
            .init(
                path: path,
                query: rest,
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
        var fields: HTTPFields = [:]
        fields[GateHeaders.status] = decision.status.rawValue
        fields[.cacheControl] = "private, no-store"
        fields[.contentType] = answer.contentType
        // Casting receivers fetch manifests from a page of another origin; the
        // answer holds no cookie and asks for none.
        fields[.accessControlAllowOrigin] = "*"
        // A HEAD's answer says the length the GET's body would have.
        let body = head.method == .head ? ByteBuffer() : ByteBuffer(bytes: answer.body)
        fields[.contentLength] = String(answer.body.count)
        return (answer.outcome, GateAnswer(status: .ok, headers: fields, body: body))
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

    static func refusal(_ status: GateStatus, reason: String) -> GateAnswer {
        var answer = PlaybackEndpoints.refusalAnswer(status: .init(code: status.httpStatus), tokenStatus: status.rawValue, reason: reason)
        answer.head.headerFields[.accessControlAllowOrigin] = "*"
        return answer
    }
}
