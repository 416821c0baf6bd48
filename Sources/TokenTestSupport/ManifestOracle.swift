import CDNTokens

/// FuzzHLS: a manifest read once and rewritten per viewer
/// (docs/DESIGN.md#tokens-inside-manifests), judged by taking the rewriting apart again.
///
/// - **Unreadable or whole**: reading any bytes either throws a
///   ``ManifestError`` or gives a manifest whose edits are ascending, disjoint
///   and inside the bytes.
/// - **Only the URIs change**: the rewriting is the original's bytes between
///   the edits, and each edit's link as written for the viewer.
/// - **Strip oracle**: a rewritten URI with the token (media) or the gate route
///   and `tgs` (playlist) taken off is the URI as it resolved, on the scope's
///   origin; a URI left alone is written exactly as it resolved, and only one
///   inside the scope's folder carries the token.
/// - **The line stays a line**: no rewritten URI holds a byte a URI cannot hold
///   (so no `"`, CR or LF can end a quoted attribute or a line).
public final class ManifestOracle {
    public static let target = "FuzzHLS"

    public static let url = try! CDNURL(parsing: "https://cdn.example.test/hls/tnt/index.m3u8?v=1&k=abc")
    public static let scope = ManifestScope(resourceURL: url, tokenNames: ["md5", "expires"])
    /// A token whose values need escaping, so the oracle sees the escaping too.
    public static let viewer = ManifestViewer(
        gateRoute: "/v1/manifest",
        session: "c2Vzc2lvbg",
        token: [CDNField("md5", "a+b/c=\"d&e#f\r\n%"), CDNField("expires", "1767225600")]
    )

    public init() {}

    public func check(_ input: [UInt8]) {
        let bytes = input.starts(with: "#EXTM3U".utf8) ? input : Array("#EXTM3U\n".utf8) + input
        let manifest: ParsedManifest
        do {
            manifest = try ParsedManifest.read(bytes, url: Self.url, scope: Self.scope, limits: ManifestLimits(maximumBytes: 1 << 20))
        } catch {
            guard !error.reason.isEmpty else { oracleFailure(Self.target, "an unreadable manifest without a reason") }
            return
        }
        if let problem = Self.problem(in: manifest, viewer: Self.viewer) {
            oracleFailure(Self.target, "\(problem): \(escaped(bytes))")
        }
    }

    /// What is wrong with `manifest` rewritten for `viewer`, or nil: the unit
    /// tests ask the same of every fixture.
    public static func problem(in manifest: ParsedManifest, viewer: ManifestViewer) -> String? {
        let output = manifest.rewritten(for: viewer)
        var expected: [UInt8] = []
        var copied = 0
        for edit in manifest.edits {
            guard edit.range.lowerBound >= copied, edit.range.upperBound <= manifest.bytes.count else { return "edits out of order" }
            expected += manifest.bytes[copied..<edit.range.lowerBound]
            let written = edit.link.written(for: viewer)
            expected += Array(written.utf8)
            copied = edit.range.upperBound
            if let problem = strip(written, edit.link, scope: manifest.scope, viewer: viewer) { return problem }
        }
        expected += manifest.bytes[copied...]
        guard expected == output else { return "the rewriting is not the original with each link written in its place" }
        return nil
    }

    /// Why `written` does not map back to `link`'s resolved URI, or nil.
    public static func strip(_ written: String, _ link: ManifestLink, scope: ManifestScope, viewer: ManifestViewer) -> String? {
        guard written.utf8.allSatisfy(isURIByte) else { return "a written URI holds a byte a URI cannot hold: \(escaped(written))" }
        let tokenQuery = viewer.tokenQuery
        guard link.classification == .inside else {
            guard written == link.resolved.description else { return "a URI left alone is not written as it resolved: \(escaped(written))" }
            return nil
        }
        var text = Substring(written)
        if let fragment = link.resolved.fragment {
            guard text.hasSuffix("#" + fragment) else { return "the fragment is not last: \(escaped(written))" }
            text = text.dropLast(fragment.utf8.count + 1)
        }
        let canonical = link.canonical(scope: scope)
        let canonicalWithoutFragment = canonical.prefix { $0 != "#" }
        switch link.role {
        case .media:
            for separator in ["&", "?"] where text.hasSuffix(separator + tokenQuery) {
                let bare = text.dropLast(tokenQuery.utf8.count + 1)
                guard separator == "&" ? bare.contains("?") : !bare.contains("?") else { continue }
                guard bare == canonicalWithoutFragment else { return "a tokenized URI strips to \(escaped(String(bare)))" }
                return nil
            }
            return "a media URI inside the scope without the token last in its query: \(escaped(written))"
        case .playlist:
            guard text.hasPrefix(viewer.gateRoute) else { return "a playlist URI not on the gate's route: \(escaped(written))" }
            text = text.dropFirst(viewer.gateRoute.utf8.count)
            let session = viewer.sessionQuery
            for separator in ["&", "?"] where text.hasSuffix(separator + session) {
                let bare = text.dropLast(session.utf8.count + 1)
                guard separator == "&" ? bare.contains("?") : !bare.contains("?") else { continue }
                guard scope.origin + bare == canonicalWithoutFragment else { return "a routed URI strips to \(escaped(String(bare)))" }
                return nil
            }
            return "a playlist URI inside the scope without the session last in its query: \(escaped(written))"
        case .base:
            guard written == canonical else { return "a base URI is not written on the scope's origin: \(escaped(written))" }
            return nil
        }
    }

    /// RFC 3986 §2, written out again: unreserved, reserved and `%`.
    static func isURIByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
    }
}
