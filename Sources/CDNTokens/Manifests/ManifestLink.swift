import EntitlementTokens

/// What a URI in a manifest names, and so where its rewriting sends the player.
public enum ManifestLinkRole: Sendable, Hashable {
    /// Another playlist or MPD (a variant, a rendition, an I-frame playlist, a
    /// rendition report, DASH `Location`): routed back through the gate with
    /// the session, so the next fetch is checked and rewritten too.
    case playlist
    /// A file the CDN serves (a segment, an init section, a part, a preload
    /// hint, a key, session data): absolute on the CDN with the token.
    case media
    /// A DASH `BaseURL`: made absolute on the CDN without a token (a query on
    /// it would be lost by resolution); the token goes on each URI resolved against it.
    case base
}

/// How the text of a rewritten URI is escaped for the place it is written.
/// Percent-encoding of each token value already keeps `"`, CR and LF out of
/// an HLS quoted attribute; an MPD needs XML's escapes on top.
public enum ManifestEscaping: Sendable, Hashable {
    /// An HLS URI line or quoted attribute: as it is.
    case none
    /// An XML attribute value or element text: `&`, `<`, `>`, `"`, `'` as entities.
    case xml
    /// A DASH `SegmentTemplate` attribute: XML's escapes, and the per-viewer
    /// parts' `$` written `$$`, since a lone `$` there starts an identifier.
    /// The fixed parts come from the template itself (every `$` already one of
    /// its identifiers) and a base the MPD reader checked holds no `$`.
    case dashTemplate
}

/// One URI of a manifest, resolved and judged once, when the manifest is
/// read; only the token differs from one viewer to the next.
public struct ManifestLink: Sendable, Hashable {
    public let role: ManifestLinkRole
    /// The reference resolved (RFC 3986 §5.2) against its base.
    public let resolved: ManifestURI
    public let classification: ManifestClassification
    public let escaping: ManifestEscaping
    /// The text around the per-viewer part, made once and already escaped.
    let writing: Writing

    enum Writing: Sendable, Hashable {
        /// Left as resolved, or a `BaseURL` made absolute: the same for every viewer.
        case fixed([UInt8])
        /// Written `prefix` + token query + `suffix`.
        case token(prefix: [UInt8], suffix: [UInt8])
        /// Written gate route + `prefix` + `tgs=` session + `suffix`.
        case gate(prefix: [UInt8], suffix: [UInt8])
    }

    /// Resolves `reference` against `base`, judges it against `scope` and
    /// makes its writing. A media URI inside the scope whose query already
    /// names one of the token's names, or a playlist URI with a `tgs`, is an
    /// error: the edge or the gate would find two values.
    public init(
        reference: ManifestURI,
        base: ManifestURI,
        role: ManifestLinkRole,
        scope: ManifestScope,
        escaping: ManifestEscaping
    ) throws(ManifestError) {
        let resolved = reference.resolved(against: base)
        let classification = scope.classify(resolved)
        self.role = role
        self.resolved = resolved
        self.classification = classification
        self.escaping = escaping
        guard classification == .inside else {
            writing = .fixed(Self.escaped(Array(resolved.description.utf8), escaping))
            return
        }
        let names = Self.queryNames(resolved.query)
        let suffix = Self.escaped(resolved.fragment.map { Array("#\($0)".utf8) } ?? [], escaping)
        let path = resolved.path.isEmpty ? "/" : resolved.path
        let question = resolved.query.map { "?\($0)&" } ?? "?"
        switch role {
        case .playlist:
            if names.contains(ManifestScope.sessionName) {
                throw ManifestError("a playlist URI whose query already holds '\(ManifestScope.sessionName)'")
            }
            writing = .gate(prefix: Self.escaped(Array((path + question).utf8), escaping), suffix: suffix)
        case .media:
            if let clash = names.first(where: { scope.tokenNames.contains($0) }) {
                throw ManifestError("a media URI whose query already holds the token's name '\(clash)'")
            }
            writing = .token(prefix: Self.escaped(Array((scope.origin + path + question).utf8), escaping), suffix: suffix)
        case .base:
            let query = resolved.query.map { "?\($0)" } ?? ""
            writing = .fixed(Self.escaped(Array((scope.origin + path + query).utf8), escaping) + suffix)
        }
    }

    /// The URI as the inside rewriting stands for it (the scope's origin, the
    /// resolved path, query and fragment): what a rewritten URI maps back to
    /// once its token or gate route is taken off.
    public func canonical(scope: ManifestScope) -> String {
        guard classification == .inside else { return resolved.description }
        return scope.origin + (resolved.path.isEmpty ? "/" : resolved.path) + (resolved.query.map { "?\($0)" } ?? "")
            + (resolved.fragment.map { "#\($0)" } ?? "")
    }

    /// The names of a query's `name=value` pairs, split on `&`.
    static func queryNames(_ query: String?) -> [String] {
        guard let query else { return [] }
        return query.split(separator: "&").map { String($0.prefix { $0 != "=" }) }
    }

    static func escaped(_ bytes: [UInt8], _ escaping: ManifestEscaping) -> [UInt8] {
        escaping == .none ? bytes : MarkupText.escaped(bytes)
    }
}

/// One splice of a manifest: the bytes of `range` in the original are
/// replaced by `link`'s writing for a viewer.
public struct ManifestEdit: Sendable, Hashable {
    public let range: Range<Int>
    public let link: ManifestLink

    public init(range: Range<Int>, link: ManifestLink) {
        self.range = range
        self.link = link
    }
}
