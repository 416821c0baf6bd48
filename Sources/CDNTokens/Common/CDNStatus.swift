/// What a reading of a CDN token concludes: the statuses `tokeninspect`
/// prints and exits with (docs/DESIGN.md#reading-cdn-tokens-back).
public enum CDNStatus: String, Sendable, Hashable, CaseIterable {
    case validToken = "VALID_TOKEN"
    case tokenExpired = "TOKEN_EXPIRED"
    case tokenNotYetValid = "TOKEN_NOT_YET_VALID"
    case invalidSignature = "INVALID_SIGNATURE"
    /// The token's scope does not cover the URL the edge was asked for.
    case urlNotCovered = "URL_NOT_COVERED"
    /// The URL's path could be read two ways (a dot segment in any spelling,
    /// an encoded `/`, a control byte: ``RequestPath``): refused, never matched.
    case invalidURL = "INVALID_URL"
    case ipMismatch = "IP_MISMATCH"
    /// A claim restricts the request in a way this reader does not judge; it
    /// is refused by name, never ignored.
    case unsupportedClaim = "UNSUPPORTED_CLAIM"
    case invalidTokenFormat = "INVALID_TOKEN_FORMAT"
}

/// A refusal, or a reason a token could not be read or made: a status and a
/// sentence that names what failed (the scope and the URL, the claim, the
/// field). Thrown by the readers and issuers; returned by the verifiers.
public struct CDNRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: CDNStatus
    public let reason: String

    public init(_ status: CDNStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    /// An unreadable token or setting: `INVALID_TOKEN_FORMAT`.
    public static func format(_ reason: String) -> CDNRefusal { CDNRefusal(.invalidTokenFormat, reason) }

    public var description: String { "\(status.rawValue): \(reason)" }
}
