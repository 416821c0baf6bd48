/// The token formats a CDN edge checks, as `tokengate` issues them and
/// `tokeninspect` reads them back (docs/DESIGN.md#the-cdn-exchange).
public enum CDNTokenKind: String, Sendable, Hashable, CaseIterable {
    /// Akamai EdgeAuth token 2.0 (`__token__`, `hdnts`, `hdnea`, `hdntl`).
    case akamai
    /// CloudFront signed URLs and signed cookies, canned and custom policies.
    case cloudfront
    /// The CTA-5007 Common Access Token: a CWT in COSE_Mac0 or COSE_Sign1.
    case cat
    /// nginx `secure_link` with `secure_link_md5`, for nginx edge caches.
    case nginxSecureLink = "nginx-secure-link"
}
