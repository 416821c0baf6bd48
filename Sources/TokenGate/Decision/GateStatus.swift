import EntitlementTokens

/// What an auth endpoint answers, in `X-Token-Status`: a verdict status of
/// SPEC §5, or one of the gate's own (SPEC §9, §11).
public enum GateStatus: Sendable, Hashable {
    case verdict(VerificationStatus)
    /// No token and no session credential in the request.
    case noToken
    case validSession
    case invalidSession
    case sessionExpired
    /// The gate takes the expected resource from a request header and this
    /// request has none: the proxy is misconfigured, not the client (500).
    case noExpectedResource
    /// The request reads two ways (SPEC §9: a doubled field, two different
    /// tokens, two session parameters): 400, never a merge.
    case badRequest
    /// `X-Token-Cookie-Path` is not a path prefix of the original URI the
    /// gate can put in a cookie: the site is misconfigured (500).
    case badCookiePath

    public var rawValue: String {
        switch self {
        case .verdict(let status): status.rawValue
        case .noToken: "NO_TOKEN"
        case .validSession: "VALID_SESSION"
        case .invalidSession: "INVALID_SESSION"
        case .sessionExpired: "SESSION_EXPIRED"
        case .noExpectedResource: "NO_EXPECTED_RESOURCE"
        case .badRequest: "BAD_REQUEST"
        case .badCookiePath: "BAD_COOKIE_PATH"
        }
    }

    public static let allCases: [GateStatus] = VerificationStatus.allCases.map(GateStatus.verdict)
        + [.noToken, .validSession, .invalidSession, .sessionExpired, .noExpectedResource, .badRequest, .badCookiePath]

    /// The HTTP status of SPEC §9: 200 allow; 401 no usable credential; 403 a
    /// refused credential; 503 the replay check could not be made (fail
    /// closed: nginx turns it into an error, never an allow); 500 the gate is
    /// misconfigured for this request; 400 the request reads two ways.
    public var httpStatus: Int {
        switch self {
        case .verdict(.validToken), .validSession: 200
        case .noToken, .sessionExpired, .verdict(.invalidTokenFormat), .verdict(.tokenExpired), .verdict(.tokenNotYetValid): 401
        case .invalidSession, .verdict(.invalidSignature), .verdict(.invalidRequestorID), .verdict(.invalidResourceID),
             .verdict(.untrustedMVPD), .verdict(.deviceMismatch), .verdict(.tokenReplayed): 403
        case .verdict(.replayCheckUnavailable): 503
        case .noExpectedResource, .badCookiePath: 500
        case .badRequest: 400
        }
    }

    public var isAllowed: Bool { httpStatus == 200 }
}

/// What an allow answer tells the proxy about the token, as header-safe text
/// (``HeaderValue``), made once per verdict (and kept by the verdict cache).
public struct Allowance: Sendable, Equatable {
    public var kind: String
    public var requestor: String
    public var resource: String
    public var mvpd: String
    /// ISO 8601, UTC.
    public var expires: String

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

    /// What an entry of the verdict cache costs, for its byte bound.
    var byteCost: Int { kind.utf8.count + requestor.utf8.count + resource.utf8.count + mvpd.utf8.count + expires.utf8.count + 160 }
}

/// One auth endpoint's decision, before it becomes an HTTP answer.
public struct GateAnswer: Sendable {
    public var status: GateStatus
    /// For the log line of a refusal; never sent to the client.
    public var reason: String
    public var allowance: Allowance?
    /// A fresh playback session credential (allow of a media token, sessions on).
    public var session: String?
    /// The whole `Set-Cookie` value that carries ``session`` (SPEC §11: the
    /// cookie comes from the gate).
    public var setCookie: String?
    /// The first 12 hex digits of the SHA-256 of the signed bytes, when a token was decoded.
    public var tokenID: String?
    /// The `kind` label of the verdict metric.
    public var kindLabel: String
}
