import EntitlementTokens

/// The kinds of credential a capture is searched for: the TV Everywhere tokens,
/// each CDN kind, the gate's playback session and its `X-Token-Status` answer.
package enum HARCredentialKind: String, Sendable, Hashable, CaseIterable {
    case mediaToken = "media-token"
    case authenticationToken = "authn-token"
    case authorizationToken = "authz-token"
    case akamai
    case cloudfront
    case cat
    case nginxSecureLink = "nginx-secure-link"
    /// A CDN token's names were there and its reader refused what they held.
    case unreadableCDNToken = "cdn-token"
    case session = "tokengate-session"
    case tokenStatus = "x-token-status"

    init(_ kind: TokenKind) {
        switch kind {
        case .media: self = .mediaToken
        case .authentication: self = .authenticationToken
        case .authorization: self = .authorizationToken
        }
    }
}

/// Where in an entry a credential was found.
package enum HARPlace: String, Sendable, Hashable {
    /// Sent: the request's URL query, its headers or cookies, its body.
    case query, header, cookie, body
    /// Received: the response's headers, its `Set-Cookie`, its body.
    case responseHeader = "response-header"
    case setCookie = "set-cookie"
    case responseBody = "response-body"

    /// True when the request carried it (as opposed to the answer handing it out).
    package var isSent: Bool { self == .query || self == .header || self == .cookie || self == .body }
}

/// A verdict at the entry's time: the status, and why in words. Without a key
/// the status is `NOT_CHECKED` (never `VALID_TOKEN`) unless the time alone
/// already decides it (an expiry passed).
package struct HARVerdict: Sendable, Hashable {
    package var status: String
    package var reason: String

    package static let notChecked = "NOT_CHECKED"
    /// The statuses that admit: a valid token, and the gate's `X-Token-Status` on a
    /// request its playback session let through (every segment of a session says it).
    package static let admitting: Set<String> = ["VALID_TOKEN", "VALID_SESSION"]
    /// What a failure is: anything but valid, not checked, or an answer that allowed.
    package var isFailure: Bool { !Self.admitting.contains(status) && status != Self.notChecked }
}

/// One credential found in one entry.
package struct HARCredential: Sendable {
    package var kind: HARCredentialKind
    package var place: HARPlace
    /// The entry it was found in.
    package var entry: Int
    /// The name it travelled under (`__token__`, `CloudFront-Signature`, `tgs`…), when it has one.
    package var name: String?
    /// Each value exactly as it appears in the HAR (what redaction replaces; a
    /// CloudFront or secure_link token is several values).
    package var values: [String]
    /// The first 12 hex digits of the SHA-256 of the values as they appear, in
    /// byte order: the same token has the same fingerprint wherever it travels
    /// (CloudFront's three cookies come back in any order).
    package var fingerprint: String
    package var verdict: HARVerdict
    /// When it stops being valid, when it says (or its cookie's lifetime says).
    package var expires: TokenTimestamp?
    /// A cookie's lifetime from its raw `Set-Cookie` line (`Max-Age`, else `Expires`), seconds.
    package var cookieLifetime: Int64?
    /// The path a `Set-Cookie` scoped the cookie to (`Path=`), and the domain (`Domain=`).
    package var cookiePath: String?
    package var cookieDomain: String?
    /// A media token's resource (its `resourceID`, or a Media RSS channel's
    /// title): what the gate expected of the request that carried it, so what
    /// a session sent beside it must be bound to.
    package var resource: String?

    package static func fingerprint(of values: [String]) -> String {
        var hasher = SHA256Hasher()
        for (index, value) in values.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { hasher.update([0x0A]) }
            hasher.update(Array(value.utf8))
        }
        return String(ByteRules.lowercaseHex(hasher.finalize().bytes).prefix(12))
    }
}
