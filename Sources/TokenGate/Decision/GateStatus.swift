import EntitlementTokens

/// What an auth endpoint answers, in `X-Token-Status`: a verdict status of
/// docs/DESIGN.md#statuses, or one of the gate's own (docs/DESIGN.md#endpoints-and-answers).
enum GateStatus: Sendable, Hashable {
    case verdict(VerificationStatus)
    /// No token and no session credential in the request.
    case noToken
    case validSession
    case invalidSession
    case sessionExpired
    /// The gate takes the expected resource from a request header and this
    /// request has none: the proxy is misconfigured, not the client (500).
    case noExpectedResource
    /// The request reads two ways (docs/DESIGN.md#the-gates-reading-of-a-request: a doubled field, two different
    /// tokens, two session parameters): 400, never a merge.
    case badRequest
    /// The original URI's path could be resolved to another place (a dot
    /// segment in any spelling, an encoded `/`, a control byte:
    /// docs/DESIGN.md#one-reading-of-a-path): 400, judged by no scope, as an nginx edge refuses it.
    case invalidRequest
    /// `X-Token-Cookie-Path` is not a path prefix of the original URI the
    /// gate can put in a cookie: the site is misconfigured (500).
    case badCookiePath
    /// The CDN exchange judged the token valid (and spent it) but its
    /// profile could not make the CDN's token (a key OpenSSL refused, no
    /// randomness): the operator's to fix, never the viewer's (500).
    case cdnIssueFailed
    /// A Common Access Token's `catu` or `catm` does not cover the original
    /// request (docs/DESIGN.md#cat-at-the-origin): 403.
    case urlNotCovered
    /// A CAT's `catnip` does not hold the viewer's IP, or the gate does not
    /// know it (no `--client-ip-header`): 403.
    case ipMismatch
    /// A CAT holds a claim that restricts the request in a way the gate does
    /// not judge; refused by name, never ignored: 403.
    case unsupportedClaim
    /// The manifest route (docs/DESIGN.md#the-manifest-route) got a manifest
    /// it cannot read with certainty: 502, never passed on half-rewritten.
    case manifestUnreadable
    /// The manifest's origin gave no answer in time, or not a whole one: 502.
    case manifestOriginUnavailable
    /// The origin has no such manifest (it answered 404 or 410): 404.
    case manifestNotFound

    var rawValue: String {
        switch self {
        case .verdict(let status): status.rawValue
        case .noToken: "NO_TOKEN"
        case .validSession: "VALID_SESSION"
        case .invalidSession: "INVALID_SESSION"
        case .sessionExpired: "SESSION_EXPIRED"
        case .noExpectedResource: "NO_EXPECTED_RESOURCE"
        case .badRequest: "BAD_REQUEST"
        case .invalidRequest: "INVALID_REQUEST"
        case .badCookiePath: "BAD_COOKIE_PATH"
        case .cdnIssueFailed: "CDN_ISSUE_FAILED"
        case .urlNotCovered: "URL_NOT_COVERED"
        case .ipMismatch: "IP_MISMATCH"
        case .unsupportedClaim: "UNSUPPORTED_CLAIM"
        case .manifestUnreadable: "MANIFEST_UNREADABLE"
        case .manifestOriginUnavailable: "MANIFEST_ORIGIN_UNAVAILABLE"
        case .manifestNotFound: "MANIFEST_NOT_FOUND"
        }
    }

    static let allCases: [GateStatus] =
        VerificationStatus.allCases.map(GateStatus.verdict)
        + [
            .noToken, .validSession, .invalidSession, .sessionExpired, .noExpectedResource, .badRequest, .invalidRequest, .badCookiePath,
            .cdnIssueFailed,
            .urlNotCovered, .ipMismatch, .unsupportedClaim,
            .manifestUnreadable, .manifestOriginUnavailable, .manifestNotFound,
        ]

    /// The HTTP status of docs/DESIGN.md#endpoints-and-answers: 200 allow; 401 no usable credential; 403 a
    /// refused credential; 503 the replay check could not be made (fail
    /// closed: nginx turns it into an error, never an allow); 500 the gate is
    /// misconfigured for this request; 400 the request reads two ways.
    var httpStatus: Int {
        switch self {
        case .verdict(.validToken), .validSession: 200
        case .noToken, .sessionExpired, .verdict(.invalidTokenFormat), .verdict(.tokenExpired), .verdict(.tokenNotYetValid): 401
        case .invalidSession, .verdict(.invalidSignature), .verdict(.invalidRequestorID), .verdict(.invalidResourceID),
            .verdict(.untrustedMVPD), .verdict(.deviceMismatch), .verdict(.tokenReplayed),
            .urlNotCovered, .ipMismatch, .unsupportedClaim:
            403
        case .verdict(.replayCheckUnavailable): 503
        case .noExpectedResource, .badCookiePath, .cdnIssueFailed: 500
        case .badRequest, .invalidRequest: 400
        case .manifestUnreadable, .manifestOriginUnavailable: 502
        case .manifestNotFound: 404
        }
    }

    var isAllowed: Bool { httpStatus == 200 }
}
