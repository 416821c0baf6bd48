import CDNTokens
import EntitlementTokens

/// What the proxy reported about one request, unjudged: the value the HTTP
/// layer makes of a request and the decision (``AuthGate``) judges
/// (docs/DESIGN.md#the-request-path).
///
/// It holds every credential that was present, not a chosen one, so that the
/// decision can apply the ambiguity rule (two readings are a 400) and "the
/// valid one wins" (docs/DESIGN.md#the-valid-one-wins). It holds no requestor: the requestor a request
/// is checked against is the gate's configuration, never the request's.
struct GateRequest: Sendable {
    /// Where a credential was found.
    enum Carrier: Sendable, Equatable, CustomStringConvertible {
        case query(String)
        case header(String)
        case cookie(String)

        var description: String {
            switch self {
            case .query(let name): "query parameter \(name)"
            case .header(let name): "header \(name)"
            case .cookie(let name): "cookie \(name)"
            }
        }
    }

    /// A credential as sent: raw bytes, still percent-encoded.
    struct Credential: Sendable {
        var value: Substring
        var carrier: Carrier
    }

    /// The expected resource the proxy named (`--resource-header`), when the
    /// gate takes it from the request; nil when the header is absent or the
    /// gate's resource is fixed.
    var resource: String?
    /// The device id header's value, when present and not empty.
    var deviceID: String?
    /// Every token value found: each token parameter's every value, the token
    /// header and every token cookie.
    var tokens: [Credential] = []
    /// Every session credential: every session cookie (browsers send several),
    /// then each session parameter value, then the session header.
    var sessions: [Credential] = []
    /// Names of the fields that must appear at most once and came on two or
    /// more field lines (docs/DESIGN.md#the-gates-reading-of-a-request: `X-Original-URI`, the resource, device,
    /// token and session headers…).
    var doubledFields: [String] = []
    /// The path of the original URI (before `?` or `#`), raw.
    var originalPath: Substring = "/"
    /// Why the original URI's path cannot be judged (docs/DESIGN.md#one-reading-of-a-path):
    /// a dot segment, an encoded `/`, a control byte. Refused before anything else is read.
    var unreadablePath: CDNRefusal?
    /// That one reading of the original URI's path, kept for a CAT's `catu`;
    /// nil when the path is unreadable or no URI was reported.
    var scopePath: String?
    /// The one `X-Forwarded-Proto` value, when exactly one field line came.
    var forwardedProto: String?
    /// `X-Token-Cookie-Path`: where the site wants the session cookie to apply.
    var cookiePath: String?
    /// Every Common Access Token found (with `--cat-key`): the header
    /// `CTA-Common-Access-Token`, each `cat` cookie, each `cat` parameter value
    /// (docs/DESIGN.md#cat-at-the-origin).
    var cats: [Credential] = []
    /// The original URI as the proxy reported it (path and query, raw, up
    /// to its first `#`); nil when it reported none.
    var originalURI: Substring?
    /// The one `X-Forwarded-Host` value, when exactly one field line came
    /// (a CAT's `catu` may restrict the host or port).
    var forwardedHost: String?
    /// The original request's method: the endpoint's own for Envoy, else
    /// `X-Forwarded-Method`; nil when the proxy reported none (read as GET).
    var method: String?
    /// The viewer's IP from `--client-ip-header`, when configured and sent once.
    var clientIP: String?
    /// "Now", read once for the whole decision.
    var now: TokenTimestamp
}
