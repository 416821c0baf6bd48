/// Where a pasted CDN token was found: what a support engineer copied it
/// from (docs/DESIGN.md#reading-cdn-tokens-back).
public enum CDNCarrier: String, Sendable, Hashable, CaseIterable {
    /// A URL's query (`?__token__=…`, CloudFront's `Signature`, `md5`, `cat`).
    case query
    /// A `Cookie:` line, as a browser sends it.
    case cookie
    /// `Set-Cookie:` lines, as an edge or the gate hands them out.
    case setCookie = "set-cookie"
    /// A `CTA-Common-Access-Token:` header line.
    case header
    /// The token alone: an EdgeAuth token or a CAT's text.
    case bare

    /// How people name it: "the URL's query", "a Cookie line".
    public var phrase: String {
        switch self {
        case .query: "the URL's query"
        case .cookie: "a Cookie line"
        case .setCookie: "Set-Cookie lines"
        case .header: "a header line"
        case .bare: "a bare token"
        }
    }
}
