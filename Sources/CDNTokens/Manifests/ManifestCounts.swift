/// What a rewriting did with a manifest's URIs, by outcome: the gate logs it,
/// `tokeninspect manifest` prints it, and a test reads it.
public struct ManifestCounts: Sendable, Equatable {
    /// Media URIs inside the scope, written on the CDN with the token.
    public var tokenized = 0
    /// Playlist URIs inside the scope, routed back through the gate.
    public var routed = 0
    /// DASH `BaseURL`s inside the scope, made absolute on the CDN without a token.
    public var rebased = 0
    /// Left as resolved: not `http`/`https`.
    public var otherScheme = 0
    /// Left as resolved: another scheme, host or port.
    public var foreignHost = 0
    /// Left as resolved: the scope's origin, another folder.
    public var otherFolder = 0
    /// Left as resolved: a path the one reading refuses.
    public var refusedPath = 0

    public init() {}

    /// Every URI counted.
    public var total: Int { tokenized + routed + rebased + leftAlone }

    /// The URIs left without a token, whatever the reason.
    public var leftAlone: Int { otherScheme + foreignHost + otherFolder + refusedPath }

    /// Counts `link` under its outcome.
    public mutating func count(_ link: ManifestLink) {
        switch link.classification {
        case .inside:
            switch link.role {
            case .media: tokenized += 1
            case .playlist: routed += 1
            case .base: rebased += 1
            }
        case .otherScheme: otherScheme += 1
        case .foreignHost: foreignHost += 1
        case .otherFolder: otherFolder += 1
        case .refusedPath: refusedPath += 1
        }
    }
}
