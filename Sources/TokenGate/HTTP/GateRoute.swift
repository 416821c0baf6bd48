import HTTPTypes

/// The gate's route table, read once from a request's head: the one place
/// that says which path is which endpoint (docs/DESIGN.md#where-the-routes-are-declared).
/// ``DirectAnswerHandler`` asks it which requests it answers on the event
/// loop, ``GateResponder`` which endpoint answers the rest.
enum GateRoute {
    /// `/v1/auth-request`, `/v1/forward-auth`, `/v1/ext-authz/…`: answered on the event loop.
    case auth(AuthRoute)
    /// `GET /v1/manifest/{path}`, with a manifest profile: answered on the event loop.
    case manifest
    case verify
    case inspect
    case playback
    case renew
    case healthz
    case readyz
    case metrics
    /// The debugger's pages, under `serve --debugger`.
    case mounted
    /// A probe asked with a method other than GET or HEAD: 405, counted as `other`.
    case probeMethodNotAllowed
    case notFound

    /// The endpoints that are there depend on the configuration: the exchange
    /// and renewal with `--cdn-profile`, the manifest route with a manifest
    /// profile, the debugger's pages with `--debugger`.
    struct Mounts: Sendable {
        var playback = false
        var manifests = false
        var debugger: (any MountedRoutes)? = nil
    }

    init(_ head: HTTPRequest, mounts: Mounts) {
        let target = Self.originForm(of: head.path ?? "/")
        let path = Self.path(of: target)
        if let auth = AuthRoute(path: path, target: target, head: head) {
            self = .auth(auth)
            return
        }
        switch path {
        case "/v1/verify": self = .verify
        case "/v1/inspect": self = .inspect
        case "/v1/playback" where mounts.playback: self = .playback
        case "/v1/playback/renew" where mounts.playback: self = .renew
        case _ where mounts.manifests && path.utf8.starts(with: ManifestEndpoint.prefix.utf8): self = .manifest
        // One `where` for the three paths: a `case` with several patterns binds it to the last alone.
        case _ where Self.probes.contains(path) && head.method != .get && head.method != .head:
            self = .probeMethodNotAllowed
        case "/healthz": self = .healthz
        case "/readyz": self = .readyz
        case "/metrics": self = .metrics
        case _ where mounts.debugger?.handles(String(path)) == true: self = .mounted
        default: self = .notFound
        }
    }

    /// Whether ``DirectAnswerHandler`` answers it from the event loop.
    var isAnsweredOnTheLoop: Bool {
        switch self {
        case .auth, .manifest, .playback, .renew: true
        default: false
        }
    }

    /// The most body bytes the route reads (its small JSON); nil: the body is dropped.
    var bodyLimit: Int? {
        switch self {
        case .playback, .renew: PlaybackEndpoints.maximumBodyBytes
        default: nil
        }
    }

    /// The endpoint it is counted and timed as.
    var endpoint: GateMetrics.Endpoint {
        switch self {
        case .auth(let auth): auth.endpoint
        case .manifest: .manifest
        case .verify: .verify
        case .inspect: .inspect
        case .playback: .playback
        case .renew: .renew
        case .healthz: .healthz
        case .readyz: .readyz
        case .metrics: .metrics
        case .mounted: .debugger
        case .probeMethodNotAllowed, .notFound: .other
        }
    }

    /// The request target in origin form (path and query): an absolute-form
    /// target (`GET http://host/v1/…`, which RFC 9112 §3.2.2 has a server
    /// accept) without its scheme and authority.
    static func originForm(of target: String) -> Substring {
        let bytes = target.utf8
        guard bytes.first != UInt8(ascii: "/") else { return target[...] }
        guard let scheme = target.utf8.firstRange(of: "://".utf8) else { return target[...] }
        let authority = target[scheme.upperBound...]
        let start = authority.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? authority.endIndex
        return authority[start...]
    }

    /// The path of an origin-form target: up to its query or fragment.
    static func path(of target: Substring) -> Substring {
        let utf8 = target.utf8
        return target[utf8.startIndex..<utf8.index(utf8.startIndex, offsetBy: pathEnd(in: utf8.span))]
    }

    /// The offset of a target's first `?` or `#` byte (its length if none),
    /// where its path ends. Bytes, never `Character`s: a `?` followed by a
    /// combining mark is one character that is no `?`, and the path would run
    /// on into the query. The one place the gate ends a path, so the path it
    /// checks and the query `CredentialLocator` reads a credential from meet
    /// at the same byte (`RequestPath` ends it there too).
    static func pathEnd(in bytes: Span<UInt8>) -> Int {
        var end = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        return end
    }

    static let extAuthzPrefix = "/v1/ext-authz"
    private static let probes: Set<Substring> = ["/healthz", "/readyz", "/metrics"]

    /// A decision span's `http.route`: the path, or the template of a route that takes one.
    static func template(of endpoint: GateMetrics.Endpoint) -> String {
        switch endpoint {
        case .authRequest: "/v1/auth-request"
        case .forwardAuth: "/v1/forward-auth"
        case .extAuthz: extAuthzPrefix + "/{path}"
        case .playback: "/v1/playback"
        case .renew: "/v1/playback/renew"
        case .manifest: ManifestEndpoint.prefix + "{path}"
        default: "/" + endpoint.rawValue
        }
    }
}

/// An auth endpoint (docs/DESIGN.md#endpoints-and-answers) and what it reads the original request from.
struct AuthRoute: Sendable {
    let endpoint: GateMetrics.Endpoint
    let originalURI: Substring?
    /// GET and HEAD only (the proxies' subrequests); else any method (Envoy checks the original request's).
    let readsOnly: Bool

    /// Whether it answers `method`.
    func answers(_ method: HTTPRequest.Method) -> Bool { !readsOnly || method == .get || method == .head }

    private static let extAuthzFolder = GateRoute.extAuthzPrefix + "/"

    /// `path`: the target's path; `target`: the origin-form target, query included.
    init?(path: Substring, target: Substring, head: HTTPRequest) {
        switch path {
        case "/v1/auth-request":
            (endpoint, originalURI, readsOnly) = (.authRequest, head.headerFields[GateHeaders.originalURI]?[...], true)
        case "/v1/forward-auth":
            (endpoint, originalURI, readsOnly) = (.forwardAuth, head.headerFields[GateHeaders.forwardedURI]?[...], true)
        case _ where path == GateRoute.extAuthzPrefix || path.utf8.starts(with: Self.extAuthzFolder.utf8):
            // Envoy appends the original path (and query) to the prefix, and
            // checks any method: the original request's.
            let original = target.dropFirst(GateRoute.extAuthzPrefix.count)
            (endpoint, originalURI, readsOnly) = (.extAuthz, original.isEmpty ? "/" : original, false)
        default:
            return nil
        }
    }
}
