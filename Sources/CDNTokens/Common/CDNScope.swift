/// What a token handed to a CDN covers: the resource's folder (a stream:
/// its playlists and segments) or its one URL (a single file).
/// docs/DESIGN.md#the-cdn-exchange says why a folder ends in `/`.
public enum CDNScope: String, Sendable, Hashable, CaseIterable {
    case folder
    case url

    /// The path prefix a folder scope covers, or the exact path a URL scope
    /// covers: `/hls/tnt/` (so `/hls/tnt2/` is not covered) or `/hls/tnt/a.mp4`.
    public func coveredPath(of url: CDNURL) -> String {
        switch self {
        case .folder: url.folderPath
        case .url: url.scopePath
        }
    }

    /// True when a request for `requested` falls inside this scope of `granted`:
    /// the same origin, and the path under the folder or equal to the URL's,
    /// each path as ``RequestPath`` reads it.
    public func covers(_ requested: CDNURL, grantedFor granted: CDNURL) -> Bool {
        guard requested.origin == granted.origin else { return false }
        switch self {
        case .folder: return requested.scopePath.hasPrefix(granted.folderPath)
        case .url: return requested.scopePath == granted.scopePath
        }
    }
}

/// What an issuer needs to make one token: the URL the resource plays from,
/// the scope, the times, and the viewer's IP when the token binds it.
public struct CDNIssueParameters: Sendable, Hashable {
    public var url: CDNURL
    public var scope: CDNScope
    /// Seconds since 1970.
    public var now: Int64
    /// How long the token lives, in seconds.
    public var lifetime: Int64
    /// How far behind an edge's clock may run: a token starts `now − leeway`.
    public var leeway: Int64
    /// The viewer's IP address, written into the token when it is bound.
    public var clientIP: String?

    public init(url: CDNURL, scope: CDNScope, now: Int64, lifetime: Int64, leeway: Int64 = 30, clientIP: String? = nil) {
        self.url = url
        self.scope = scope
        self.now = now
        self.lifetime = lifetime
        self.leeway = leeway
        self.clientIP = clientIP
    }

    /// When the token stops being valid.
    public var expires: Int64 { now + lifetime }
}

/// What a reader checks a token against, as an edge would: the URL asked
/// for, the time, the viewer's IP and the method.
public struct CDNRequestFacts: Sendable, Hashable {
    /// The URL the edge was asked for; nil when none is given (the scope is then not checked).
    public var url: CDNURL?
    /// Seconds since 1970.
    public var now: Int64
    /// The viewer's IP address; nil when unknown (a token bound to an IP is then refused).
    public var clientIP: String?
    /// The request's method (`catm`), upper case.
    public var method: String
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    public var leeway: Int64

    public init(url: CDNURL? = nil, now: Int64, clientIP: String? = nil, method: String = "GET", leeway: Int64 = 30) {
        self.url = url
        self.now = now
        self.clientIP = clientIP
        self.method = method
        self.leeway = leeway
    }
}

/// One decoded field of a token, for display: its name as the format writes it,
/// and its value as text (escaped by whoever prints it).
public struct CDNField: Sendable, Hashable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
