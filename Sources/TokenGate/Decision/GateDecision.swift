import EntitlementTokens

/// What an allow answer tells the proxy about the token, as header-safe text
/// (``HeaderValue``), made once per verdict (and kept by the verdict cache).
struct Allowance: Sendable, Equatable {
    var kind: String
    var requestor: String
    var resource: String
    var mvpd: String
    /// ISO 8601, UTC.
    var expires: String

    init(token: EntitlementToken, expectedResource: String?) {
        kind = token.kind.rawValue
        requestor = HeaderValue.encode(token.requestorID)
        // An authentication token names no single resource: the one this request was for.
        resource = HeaderValue.encode(token.resourceID ?? expectedResource ?? "")
        mvpd = HeaderValue.encode(token.mvpdID ?? "")
        expires = token.expiresAt.iso8601
    }

    init(sessionFor resource: String?, requestor: String?, expires: TokenTimestamp) {
        kind = "session"
        self.requestor = HeaderValue.encode(requestor ?? "")
        self.resource = HeaderValue.encode(resource ?? "")
        mvpd = ""
        self.expires = expires.iso8601
    }

    /// A Common Access Token's allow (docs/DESIGN.md#cat-at-the-origin): its
    /// `iss` stands where a token's requestor would, the resource is this
    /// request's (a CAT covers URLs, through `catu`), and no MVPD.
    init(catIssuedBy issuer: String?, resource: String?, expires: TokenTimestamp) {
        kind = CATOrigin.kindLabel
        requestor = HeaderValue.encode(issuer ?? "")
        self.resource = HeaderValue.encode(resource ?? "")
        mvpd = ""
        self.expires = expires.iso8601
    }

    /// What an entry of the verdict cache costs, for its byte bound.
    var byteCost: Int { kind.utf8.count + requestor.utf8.count + resource.utf8.count + mvpd.utf8.count + expires.utf8.count + 160 }
}

/// One auth endpoint's decision (docs/DESIGN.md#the-request-path): what the HTTP
/// layer turns into a response — status (and so the HTTP class), the allow's
/// values, a session to issue with its cookie, and the reason for the log
/// and `X-Token-Reason`.
struct GateDecision: Sendable {
    var status: GateStatus
    /// For the log line of a refusal; never sent to the client.
    var reason: String
    var allowance: Allowance?
    /// A fresh playback session credential (allow of a media token, sessions on).
    var session: String?
    /// The whole `Set-Cookie` value that carries ``session`` (docs/DESIGN.md#the-session-cookie: the
    /// cookie comes from the gate).
    var setCookie: String?
    /// The first 12 hex digits of the SHA-256 of the signed bytes, when a token was decoded.
    var tokenID: String?
    /// The `kind` label of the verdict metric.
    var kindLabel: String
    /// An allowed CAT with `catreplay` 2 that the replay store had seen
    /// before: counted and logged, not refused.
    var catReuseDetected = false
    /// A renewed CAT's header (`catr`, docs/DESIGN.md#catr-renewal-at-the-origin); a
    /// renewal as a cookie is ``setCookie``. Never logged.
    var renewedCATHeader: HeaderLine?
    /// A CAT was renewed: counted.
    var catRenewed = false

    /// One header field of the answer, named at decision time.
    struct HeaderLine: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// The reason as `X-Token-Reason` carries it. A replay store that cannot
    /// answer is named with its address and cause in the log and `/readyz`
    /// only: a header travels toward the player (docs/DESIGN.md#operators).
    var headerReason: String {
        status == .verdict(.replayCheckUnavailable) ? Self.storeUnavailableReason : reason
    }

    static let storeUnavailableReason =
        "the one-time-use check could not be made: the replay store did not answer (the gate's log and /readyz say why)"
}
