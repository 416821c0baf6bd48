/// A CloudFront signed URL taken apart: the token its query carries, and the
/// URL without the signing parameters — the URL CloudFront matches against the
/// policy's `Resource` and, for a canned policy, the one it rebuilds the signed
/// policy from.
public struct CloudFrontSignedURL: Sendable, Hashable {
    public let token: CloudFrontToken
    /// The URL as it was before signing (botocore's `url` argument).
    public let unsignedURL: CDNURL

    public init(_ url: CDNURL) throws(CDNRefusal) {
        self.token = try CloudFrontToken(queryPairs: Self.queryPairs(of: url))
        self.unsignedURL = try Self.removingSigningParameters(from: url)
    }

    /// The query's `name=value` pieces as written (a piece without `=` has an
    /// empty value), in order; none when there is no query.
    public static func queryPairs(of url: CDNURL) -> [CDNField] {
        url.query.map { queryPairs(query: $0[...]) } ?? []
    }

    /// The `name=value` pieces of a query string, split at `&` and the first `=`, as written.
    public static func queryPairs(query: Substring) -> [CDNField] {
        query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map { piece in
            guard let equals = piece.firstIndex(of: UInt8(ascii: "=")) else { return CDNField(String(Substring(piece)), "") }
            return CDNField(String(Substring(piece[..<equals])), String(Substring(piece[piece.index(after: equals)...])))
        }
    }

    /// `url` without the query pieces named `Expires`, `Policy`, `Signature`,
    /// `Key-Pair-Id` or `Hash-Algorithm`, the others kept in order. A URL that
    /// botocore signed comes back exactly as botocore was given it (with `?`
    /// when it ended in one, since botocore then appends `&…`); a URL without
    /// those pieces comes back unchanged.
    public static func removingSigningParameters(from url: CDNURL) throws(CDNRefusal) -> CDNURL {
        guard let query = url.query else { return url }
        let pieces = query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
        let kept = pieces.filter { piece in
            let name = piece.prefix { $0 != UInt8(ascii: "=") }
            return !CloudFrontToken.parameters.contains { $0.utf8.elementsEqual(name) }
        }
        guard kept.count != pieces.count else { return url }
        let rest = kept.isEmpty ? "" : "?" + kept.map { String(Substring($0)) }.joined(separator: "&")
        return try CDNURL(parsing: url.origin + url.path + rest)
    }
}
