/// The kind of manifest, as sniffed from its first bytes.
public enum ManifestFormat: Sendable, Hashable {
    /// An HLS playlist of variants and renditions (RFC 8216 §4.4.6).
    case hlsMultivariant
    /// An HLS playlist of segments (RFC 8216 §4.4.4).
    case hlsMedia
    /// A DASH MPD.
    case dash
}

/// A manifest read once: its bytes and where each URI in them lies, resolved
/// and judged. The gate reads an origin's answer once and shares the value
/// among viewers; writing it for a viewer is one linear splice
/// (``rewritten(for:)``), so a manifest costs one token, not one parse, per
/// viewer (docs/DESIGN.md#tokens-inside-manifests).
public struct ParsedManifest: Sendable {
    /// The manifest as the origin sent it.
    public let bytes: [UInt8]
    public let format: ManifestFormat
    /// Ascending and disjoint: each range of ``bytes`` a URI is spliced over.
    public let edits: [ManifestEdit]
    /// A live playlist (no `#EXT-X-ENDLIST`; a multivariant playlist counts as
    /// live) or a dynamic MPD: its token lives for the profile's lifetime.
    public let isLive: Bool
    /// The total duration (the `#EXTINF` sum, `mediaPresentationDuration`), when known.
    public let durationSeconds: Double?
    public let counts: ManifestCounts
    public let scope: ManifestScope

    /// A reader's result; `edits` must be ascending and disjoint, within `bytes`.
    init(bytes: [UInt8], format: ManifestFormat, edits: [ManifestEdit], isLive: Bool, durationSeconds: Double?, scope: ManifestScope) {
        var counts = ManifestCounts()
        var end = 0
        for edit in edits {
            precondition(edit.range.lowerBound >= end && edit.range.upperBound <= bytes.count, "manifest edits out of order")
            end = edit.range.upperBound
            counts.count(edit.link)
        }
        self.bytes = bytes
        self.format = format
        self.edits = edits
        self.isLive = isLive
        self.durationSeconds = durationSeconds
        self.counts = counts
        self.scope = scope
    }

    /// Reads a manifest fetched from `url`: `#EXTM3U` first is HLS, `<?xml` or
    /// `<MPD` (after a byte-order mark or white space) is DASH; anything else,
    /// and anything past `limits`, is unreadable.
    public static func read(
        _ bytes: [UInt8],
        url: CDNURL,
        scope: ManifestScope,
        limits: ManifestLimits = ManifestLimits()
    ) throws(ManifestError) -> ParsedManifest {
        guard bytes.count <= limits.maximumBytes else {
            throw ManifestError("a manifest of \(bytes.count) bytes (at most \(limits.maximumBytes))")
        }
        if bytes.starts(with: "#EXTM3U".utf8) {
            return try HLSManifestReader.read(bytes, url: url, scope: scope, limits: limits)
        }
        var start = bytes.startIndex
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        while start < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        if bytes[start...].starts(with: "<?xml".utf8) || bytes[start...].starts(with: "<MPD".utf8) {
            return try DASHManifestReader.read(bytes, url: url, scope: scope, limits: limits)
        }
        throw ManifestError("neither an HLS playlist ('#EXTM3U' first) nor a DASH MPD", offset: 0)
    }

    /// The manifest as `viewer` receives it: one pass, the unchanged bytes
    /// copied as slices between the edits.
    public func rewritten(for viewer: ManifestViewer) -> [UInt8] {
        let pieces = ViewerPieces(viewer)
        var out: [UInt8] = []
        var growth = 0
        for edit in edits { growth += edit.link.writtenCount(pieces) - edit.range.count }
        out.reserveCapacity(max(0, bytes.count + growth))
        var copied = 0
        for edit in edits {
            out.append(contentsOf: bytes[copied..<edit.range.lowerBound])
            edit.link.write(pieces, into: &out)
            copied = edit.range.upperBound
        }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// How long the token written into this manifest lives, in seconds: a
    /// live manifest's for the profile's lifetime (every reload makes a new
    /// one); a VOD's for its whole duration plus the profile's lifetime, so
    /// a viewer who pauses is still served; never past the session's end, and
    /// never below one second.
    public func tokenLifetime(profileLifetime: Int64, secondsUntilSessionEnd: Int64) -> Int64 {
        var lifetime = profileLifetime
        if !isLive, let durationSeconds, durationSeconds.isFinite, durationSeconds > 0 {
            let whole = durationSeconds.rounded(.up)
            lifetime = whole >= Double(Int64.max / 2) ? Int64.max / 2 : Int64(whole) + profileLifetime
        }
        return max(1, min(lifetime, secondsUntilSessionEnd))
    }
}

/// A viewer's parts, made once per rewriting in each escaping.
struct ViewerPieces {
    let gateRoute: [UInt8]
    let gateRouteXML: [UInt8]
    let gateRouteTemplate: [UInt8]
    let token: [UInt8]
    let tokenXML: [UInt8]
    let tokenTemplate: [UInt8]
    let session: [UInt8]
    let sessionXML: [UInt8]
    let sessionTemplate: [UInt8]

    init(_ viewer: ManifestViewer) {
        gateRoute = Array(viewer.gateRoute.utf8)
        gateRouteXML = ManifestLink.escaped(gateRoute, .xml)
        gateRouteTemplate = Self.dollarsDoubled(gateRouteXML)
        token = Array(viewer.tokenQuery.utf8)
        tokenXML = ManifestLink.escaped(token, .xml)
        tokenTemplate = Self.dollarsDoubled(tokenXML)
        session = Array(viewer.sessionQuery.utf8)
        sessionXML = ManifestLink.escaped(session, .xml)
        sessionTemplate = Self.dollarsDoubled(sessionXML)
    }

    func gateRoute(_ escaping: ManifestEscaping) -> [UInt8] {
        switch escaping {
        case .none: gateRoute
        case .xml: gateRouteXML
        case .dashTemplate: gateRouteTemplate
        }
    }

    func token(_ escaping: ManifestEscaping) -> [UInt8] {
        switch escaping {
        case .none: token
        case .xml: tokenXML
        case .dashTemplate: tokenTemplate
        }
    }

    func session(_ escaping: ManifestEscaping) -> [UInt8] {
        switch escaping {
        case .none: session
        case .xml: sessionXML
        case .dashTemplate: sessionTemplate
        }
    }

    /// `$` as `$$`: a DASH template's literal dollar.
    static func dollarsDoubled(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "$")) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        for byte in bytes {
            out.append(byte)
            if byte == UInt8(ascii: "$") { out.append(byte) }
        }
        return out
    }
}

extension ManifestLink {
    func writtenCount(_ pieces: ViewerPieces) -> Int {
        switch writing {
        case .fixed(let bytes): return bytes.count
        case .token(let prefix, let suffix): return prefix.count + pieces.token(escaping).count + suffix.count
        case .gate(let prefix, let suffix):
            return pieces.gateRoute(escaping).count + prefix.count + pieces.session(escaping).count + suffix.count
        }
    }

    func write(_ pieces: ViewerPieces, into out: inout [UInt8]) {
        switch writing {
        case .fixed(let bytes):
            out.append(contentsOf: bytes)
        case .token(let prefix, let suffix):
            out.append(contentsOf: prefix)
            out.append(contentsOf: pieces.token(escaping))
            out.append(contentsOf: suffix)
        case .gate(let prefix, let suffix):
            out.append(contentsOf: pieces.gateRoute(escaping))
            out.append(contentsOf: prefix)
            out.append(contentsOf: pieces.session(escaping))
            out.append(contentsOf: suffix)
        }
    }

    /// This link as `viewer` receives it (what ``ParsedManifest/rewritten(for:)`` splices in).
    public func written(for viewer: ManifestViewer) -> String {
        var out: [UInt8] = []
        write(ViewerPieces(viewer), into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// The edits a reader collects, in order, bounded by ``ManifestLimits/maximumLinks``.
struct ManifestEditList {
    private(set) var edits: [ManifestEdit] = []
    let limit: Int

    init(limit: Int) { self.limit = limit }

    mutating func append(_ range: Range<Int>, _ link: ManifestLink) throws(ManifestError) {
        guard edits.count < limit else { throw ManifestError("more than \(limit) URIs in one manifest") }
        edits.append(ManifestEdit(range: range, link: link))
    }
}
