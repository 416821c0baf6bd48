import HTTPTypes
import Hummingbird

/// The headers of every answer the debugger gives (docs/DESIGN.md#the-web-debugger): the page may
/// load only its own script and style, talk only to its own server, never be
/// framed, and hand no string to an HTML or script sink (Trusted Types); the
/// browser reports any violation to the debugger, which keeps it for the tests.
enum DebuggerHeaders {
    static let contentSecurityPolicy = policy(styleSources: "'self'")

    /// The policy, its `style-src` aside: `'self'` everywhere, and for the HAR
    /// report (``DebuggerHAR``) also the hash of that page's one inline style block.
    static func policy(styleSources: String) -> String {
        "default-src 'none'; script-src 'self'; style-src \(styleSources); connect-src 'self'; "
            + "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
            + "require-trusted-types-for 'script'; report-uri \(DebuggerEndpoints.Path.cspReport)"
    }

    static let contentSecurityPolicyName = HTTPField.Name("Content-Security-Policy")!
    static let contentTypeOptionsName = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicyName = HTTPField.Name("Referrer-Policy")!
    static let frameOptionsName = HTTPField.Name("X-Frame-Options")!
    static let crossOriginResourcePolicyName = HTTPField.Name("Cross-Origin-Resource-Policy")!

    /// The strict set, with this content type; with `styleHash`, the policy
    /// also allows the one inline style block of that hash (`sha256-…`).
    static func fields(contentType: String, styleHash: String? = nil) -> HTTPFields {
        [
            .contentType: contentType,
            .cacheControl: "no-store",
            contentSecurityPolicyName: styleHash.map { policy(styleSources: "'self' '\($0)'") } ?? contentSecurityPolicy,
            contentTypeOptionsName: "nosniff",
            referrerPolicyName: "no-referrer",
            frameOptionsName: "DENY",
            crossOriginResourcePolicyName: "same-origin",
        ]
    }

    static func response(_ status: HTTPResponse.Status, contentType: String, _ body: String) -> Response {
        Response(status: status, headers: fields(contentType: contentType), body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func response(_ status: HTTPResponse.Status, contentType: String, bytes: [UInt8]) -> Response {
        Response(status: status, headers: fields(contentType: contentType), body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
