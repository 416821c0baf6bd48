import CDNTokens
import EntitlementTokens
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// `POST /v1/playback` (JSON in, JSON out: for a player's backend or a web
/// player's script) and `GET /v1/playback` (a link the player opens: 303 to
/// the CDN URL with the cookies set), docs/DESIGN.md#the-cdn-exchange.
///
/// Every answer carries `X-Token-Status` and `Cache-Control: no-store`; a
/// refusal carries `X-Token-Reason` and `{"status","reason"}` with the HTTP
/// status of the auth routes. The issued token travels only in the answer,
/// never to the log. Both routes are answered from the event loop
/// (``DirectAnswerHandler``), from the request's head and its body, gathered
/// up to ``maximumBodyBytes``.
struct PlaybackEndpoints: Sendable {
    /// A token, a resource id, a profile name and a device id: a few kilobytes at most.
    static let maximumBodyBytes = 16 * 1024
    static let fields = ["token", "resource", "profile", "deviceId"]

    let exchange: PlaybackExchange
    let deviceHeader: HTTPField.Name
    let clock: @Sendable () -> TokenTimestamp

    enum Read {
        case request(PlaybackExchange.Request)
        case refusal(HTTPResponse.Status, String)
    }

    /// Every request has an outcome, so every refusal is counted with its
    /// status, those refused before the exchange (a wrong method, a doubled
    /// parameter, a body that is not JSON) too.
    func respond(_ head: HTTPRequest, body: RequestBody) async -> (PlaybackExchange.Outcome, GateAnswer) {
        let read: Read
        switch head.method {
        case .post: read = Self.readPost(head, body: body, deviceHeader: deviceHeader, now: clock(), exchange: exchange)
        case .get: read = Self.readGet(head, deviceHeader: deviceHeader, now: clock(), exchange: exchange)
        // Not HEAD: a link checker's HEAD would spend the viewer's token.
        default:
            let refusal = GateDecision(status: .badRequest, reason: "the method is not GET or POST", kindLabel: "none")
            return (.refused(refusal), GateAnswer.methodNotAllowed(allow: "GET, POST"))
        }
        switch read {
        case .refusal(let status, let reason):
            let refusal = GateDecision(status: .badRequest, reason: reason, kindLabel: "none")
            return (.refused(refusal), Self.refusalAnswer(status: status, tokenStatus: GateStatus.badRequest.rawValue, reason: reason))
        case .request(let exchangeRequest):
            let outcome = await exchange.exchange(exchangeRequest)
            return (outcome, render(outcome, redirect: head.method != .post, secure: Self.isSecure(head)))
        }
    }

    /// `POST /v1/playback/renew` (docs/DESIGN.md#renewal): a fresh CDN
    /// token, or a manifest profile's fresh `url`, from the playback session.
    func renew(_ head: HTTPRequest, body: RequestBody) -> (PlaybackExchange.Outcome, GateAnswer) {
        guard head.method == .post else {
            let refusal = GateDecision(status: .badRequest, reason: "the method is not POST", kindLabel: "none")
            return (.refused(refusal), GateAnswer.methodNotAllowed(allow: "POST"))
        }
        let members: StringMembersBody.Members
        switch Self.readJSON(head, body: body, allowed: ["profile", "resource"]) {
        case .success(let read): members = read
        case .failure(let refusal):
            let decision = GateDecision(status: .badRequest, reason: refusal.reason, kindLabel: "none")
            return (
                .refused(decision), Self.refusalAnswer(status: refusal.status, tokenStatus: GateStatus.badRequest.rawValue, reason: refusal.reason)
            )
        }
        let configuration = exchange.gate.configuration
        let headers = head.headerFields
        var sessions: [GateRequest.Credential] = []
        for value in CredentialLocator.cookies(configuration.sessionCookie, in: headers) {
            sessions.append(.init(value: value, carrier: .cookie(configuration.sessionCookie)))
        }
        for value in CredentialLocator.parameters([configuration.sessionParam], inURI: (head.path ?? "/")[...])[0] where !value.isEmpty {
            sessions.append(.init(value: value, carrier: .query(configuration.sessionParam)))
        }
        if let name = HTTPField.Name(configuration.sessionHeader), let value = CredentialLocator.header(name, in: headers) {
            sessions.append(.init(value: value, carrier: .header(configuration.sessionHeader)))
        }
        let deviceLines = headers[values: deviceHeader]
        guard deviceLines.count <= 1 else {
            let reason = "the request has more than one \(deviceHeader.rawName) field: it reads two ways"
            return (
                .refused(GateDecision(status: .badRequest, reason: reason, kindLabel: "none")),
                Self.refusalAnswer(status: .badRequest, tokenStatus: GateStatus.badRequest.rawValue, reason: reason)
            )
        }
        let (clientIPs, _) = Self.common(headers, exchange: exchange, profile: members["profile"])
        let outcome = exchange.renew(
            .init(
                resource: members["resource"],
                profile: members["profile"],
                deviceID: deviceLines.first.flatMap { $0.isEmpty ? nil : $0 },
                sessions: sessions,
                clientIPs: clientIPs,
                now: clock()
            )
        )
        return (outcome, render(outcome, redirect: false, secure: Self.isSecure(head)))
    }

    /// Cookies are `Secure` unless the proxy reported exactly one `X-Forwarded-Proto: http`.
    static func isSecure(_ head: HTTPRequest) -> Bool {
        head.headerFields[values: GateHeaders.forwardedProto] != ["http"]
    }

    func render(_ outcome: PlaybackExchange.Outcome, redirect: Bool, secure: Bool = true) -> GateAnswer {
        guard let grant = outcome.grant else {
            return Self.refusalAnswer(
                status: .init(code: outcome.decision.status.httpStatus),
                tokenStatus: outcome.decision.status.rawValue,
                reason: outcome.decision.headerReason
            )
        }
        var headers: HTTPFields = [:]
        headers[GateHeaders.status] = outcome.decision.status.rawValue
        headers[.cacheControl] = "no-store"
        for cookie in grant.cookies { headers.append(HTTPField(name: .setCookie, value: cookie.setCookieValue)) }
        if let session = outcome.session {
            let maxAge = max(0, (session.expires.millisecondsSince1970 - clock().millisecondsSince1970) / 1000)
            headers.append(HTTPField(name: .setCookie, value: exchange.gate.setCookie(session.credential, path: "/", maxAge: maxAge, secure: secure)))
        }
        if redirect {
            headers[.location] = grant.url
            return GateAnswer(status: .seeOther, headers: headers)
        }
        headers[.contentType] = "application/json"
        return GateAnswer(
            status: .ok,
            headers: headers,
            body: ByteBuffer(bytes: Self.json(grant, status: outcome.decision.status.rawValue, session: outcome.session))
        )
    }

    /// The allow's body: `{"status","profile","kind","url","expires","cookies":[…],"headers":{…}}`,
    /// and `"session"`, `"sessionExpires"` when the exchange opened one; a newline ends it.
    static func json(_ grant: CDNGrant, status: String = "VALID_TOKEN", session: PlaybackExchange.OpenedSession? = nil) -> [UInt8] {
        var json = JSONWriter(capacity: 1024, controlEscapes: .unicode)
        json.beginObject()
        json.member("status")
        json.string(status)
        json.member("profile")
        json.string(grant.profile)
        json.member("kind")
        json.string(grant.kind.rawValue)
        json.member("url")
        json.string(grant.url)
        json.member("expires")
        json.string(TokenTimestamp(millisecondsSince1970: grant.expires * 1000)?.iso8601 ?? String(grant.expires))
        json.member("cookies")
        json.beginArray()
        for cookie in grant.cookies {
            json.element()
            json.beginObject()
            json.member("name")
            json.string(cookie.name)
            json.member("value")
            json.string(cookie.value)
            json.member("domain")
            json.string(cookie.domain)
            json.member("path")
            json.string(cookie.path)
            json.member("maxAge")
            json.int(Int(cookie.maxAge))
            json.member("secure")
            json.bool(cookie.secure)
            json.member("httpOnly")
            json.bool(cookie.httpOnly)
            json.member("sameSite")
            json.string(cookie.sameSite)
            json.endObject()
        }
        json.endArray()
        json.member("headers")
        json.beginObject()
        for header in grant.headers {
            json.key(header.name)
            json.string(header.value)
        }
        json.endObject()
        if let session {
            json.member("session")
            json.string(session.credential)
            json.member("sessionExpires")
            json.string(session.expires.iso8601)
        }
        json.endObject()
        json.raw("\n")
        return json.bytes
    }

    /// A refusal: `X-Token-Status`, `X-Token-Reason` and `{"status","reason"}`.
    static func refusalAnswer(status: HTTPResponse.Status, tokenStatus: String, reason: String) -> GateAnswer {
        var headers: HTTPFields = [:]
        headers[GateHeaders.status] = tokenStatus
        headers[GateHeaders.reason] = HeaderValue.encode(reason, maximumBytes: HeaderValue.maximumReasonBytes)
        headers[.cacheControl] = "no-store"
        headers[.contentType] = "application/json"
        return GateAnswer(
            status: status,
            headers: headers,
            body: ByteBuffer(bytes: Self.refusalBody(tokenStatus: tokenStatus, reason: reason))
        )
    }

    /// `{"status","reason"}` and a newline.
    static func refusalBody(tokenStatus: String, reason: String) -> [UInt8] {
        var json = JSONWriter(capacity: 256, controlEscapes: .unicode)
        json.beginObject()
        json.member("status")
        json.string(tokenStatus)
        json.member("reason")
        json.string(reason)
        json.endObject()
        json.raw("\n")
        return json.bytes
    }

    /// Where a browser says a request is a prefetch.
    private static let purposeFields = [HTTPField.Name("Sec-Purpose")!, HTTPField.Name("Purpose")!]

    /// The profile's IP header values and the prefetch marks, for either method.
    static func common(_ headers: HTTPFields, exchange: PlaybackExchange, profile: String?) -> (clientIPs: [String], isPrefetch: Bool) {
        let set = exchange.profiles.current
        let ipHeader = (profile.flatMap(set.profile(named:)) ?? (set.profiles.count == 1 ? set.profiles.first : nil))?.settings.ipHeader
        let clientIPs = ipHeader.flatMap { HTTPField.Name($0) }.map { name in headers[values: name] } ?? []
        let purposes = purposeFields.flatMap { headers[values: $0] }
        // `Sec-Purpose: prefetch` or `prefetch;prerender` (a structured list's first item), any case.
        let isPrefetch = purposes.contains { value in
            value.lowercased().split(separator: ";").first.map { $0.split(separator: " ").joined() } == "prefetch"
        }
        return (clientIPs, isPrefetch)
    }

    static func readGet(_ head: HTTPRequest, deviceHeader: HTTPField.Name, now: TokenTimestamp, exchange: PlaybackExchange) -> Read {
        let query = URI(head.path ?? "/").queryParameters
        var values = StringMembersBody.Members()
        for name in ["token", "resource", "profile"] {
            let all = query[values: Substring(name)]
            guard all.count <= 1 else { return .refusal(.badRequest, "the query has \(all.count) \(name) parameters: it reads two ways") }
            if let value = all.first { values.append(name, String(value)) }
        }
        for (name, _) in query where !["token", "resource", "profile"].contains(String(name)) {
            return .refusal(.badRequest, "the query parameter \(HeaderValue.encode(String(name))) is not one of token, resource, profile")
        }
        guard let token = values["token"], !token.isEmpty else { return .refusal(.badRequest, "no token: give ?token=…") }
        return readRequest(token: token, values: values, deviceID: nil, head.headerFields, deviceHeader: deviceHeader, now: now, exchange: exchange)
    }

    static func readPost(
        _ head: HTTPRequest,
        body: RequestBody,
        deviceHeader: HTTPField.Name,
        now: TokenTimestamp,
        exchange: PlaybackExchange
    ) -> Read {
        let values: StringMembersBody.Members
        switch readJSON(head, body: body, allowed: fields) {
        case .success(let read): values = read
        case .failure(let refusal): return .refusal(refusal.status, refusal.reason)
        }
        guard let token = values["token"], !token.isEmpty else { return .refusal(.badRequest, "no token: the body needs {\"token\": …}") }
        return readRequest(
            token: token,
            values: values,
            deviceID: values["deviceId"],
            head.headerFields,
            deviceHeader: deviceHeader,
            now: now,
            exchange: exchange
        )
    }

    /// What both methods read past the token: the device from at most one
    /// header line, which must name the device a body's `deviceId` names
    /// (`deviceID`, nil for a query), and the profile's client addresses.
    private static func readRequest(
        token: String,
        values: StringMembersBody.Members,
        deviceID: String?,
        _ headers: HTTPFields,
        deviceHeader: HTTPField.Name,
        now: TokenTimestamp,
        exchange: PlaybackExchange
    ) -> Read {
        var deviceID = deviceID
        let deviceLines = headers[values: deviceHeader]
        guard deviceLines.count <= 1 else {
            return .refusal(.badRequest, "the request has more than one \(deviceHeader.rawName) field: it reads two ways")
        }
        if let header = deviceLines.first, !header.isEmpty {
            guard deviceID == nil || deviceID == header else {
                return .refusal(.badRequest, "deviceId and \(deviceHeader.rawName) name two devices: the request reads two ways")
            }
            deviceID = header
        }
        let (clientIPs, isPrefetch) = common(headers, exchange: exchange, profile: values["profile"])
        return .request(
            .init(
                token: token,
                resource: values["resource"],
                profile: values["profile"],
                deviceID: deviceID.flatMap { $0.isEmpty ? nil : $0 },
                clientIPs: clientIPs,
                isPrefetch: isPrefetch,
                now: now
            )
        )
    }

    /// Why a body was refused: the HTTP status and the reason.
    struct BodyRefusal: Error {
        var status: HTTPResponse.Status
        var reason: String
    }

    /// A JSON object body of string members among `allowed`, at most `maximumBodyBytes` (``StringMembersBody``).
    static func readJSON(_ head: HTTPRequest, body: RequestBody, allowed: [String]) -> Result<StringMembersBody.Members, BodyRefusal> {
        if let refusal = BodyMediaType.refusal(head.headerFields, accepting: BodyMediaType.json, absentIsAccepted: false) {
            return .failure(BodyRefusal(status: .unsupportedMediaType, reason: refusal))
        }
        let bytes: ByteBuffer
        switch body {
        case .whole(let whole): bytes = whole
        case .dropped: bytes = ByteBuffer()
        case .overLimit:
            if let length = head.headerFields[.contentLength].flatMap({ Int($0) }), length > maximumBodyBytes {
                return .failure(BodyRefusal(status: .contentTooLarge, reason: "the body is \(length) bytes; at most \(maximumBodyBytes) are read"))
            }
            return .failure(BodyRefusal(status: .contentTooLarge, reason: "the body is over \(maximumBodyBytes) bytes"))
        }
        return StringMembersBody.read(Array(bytes.readableBytesView), allowed: allowed).mapError {
            BodyRefusal(status: .badRequest, reason: $0.reason)
        }
    }
}
