/// Where the manifest route gets a manifest: a profile's `manifest-origin`
/// (docs/DESIGN.md#the-manifest-route). The decision names what it needs
/// and never how it travels; `Origin/OriginHTTPClient.swift` is the HTTP/1.1
/// client that fetches it, assembled in `App/`.
protocol ManifestOrigin: Sendable {
    /// One `GET`, answered whole within `request.deadline` and at most
    /// `request.maximumBytes` of body, or a failure: never a partial body.
    /// A `Result`, not typed `throws`: an async requirement with a typed
    /// error, called through the existential, crashes as compiled by Swift 6.3.1.
    func fetch(_ request: OriginRequest) async -> Result<OriginAnswer, OriginFailure>
}

/// One fetch from an origin: its base URL's parts and the path (with its
/// query) appended to the base's path.
struct OriginRequest: Sendable, Hashable {
    var scheme: String
    var host: String
    var port: Int
    /// The request target: the base's path, the manifest's path, `?query` when there is one.
    var target: String
    var maximumBytes: Int
    var deadline: Duration

    /// `Host`: the port only when it is not the scheme's.
    var hostField: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return (scheme == "https" && port == 443) || (scheme == "http" && port == 80) ? bracketed : "\(bracketed):\(port)"
    }
}

/// What the origin answered: its status, the two headers the route reads, the body.
struct OriginAnswer: Sendable {
    var status: Int
    var contentType: String?
    var cacheControl: String?
    var body: [UInt8]
}

/// Why a fetch gave no answer. Each is "unavailable" to a viewer (502 or
/// 504), never a manifest passed through unread.
enum OriginFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case connect(String)
    case deadline
    case tooLarge(Int)
    case closedEarly
    case malformed(String)
    /// Every connection the gate may keep to this origin is busy.
    case busy

    var description: String {
        switch self {
        case .connect(let why): "could not connect: \(why)"
        case .deadline: "no whole answer within the deadline"
        case .tooLarge(let limit): "the answer is over \(limit) bytes (manifest-max-bytes)"
        case .closedEarly: "the origin closed the connection before its answer ended"
        case .malformed(let why): "the answer is not HTTP/1.1 the gate reads: \(why)"
        case .busy: "every connection to the origin is in use"
        }
    }
}
