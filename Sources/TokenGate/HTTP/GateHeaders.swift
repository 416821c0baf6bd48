import HTTPTypes

/// The header fields the gate reads from its proxy and writes in its answers,
/// named once. The names an operator sets (`--device-header`, `--token-header`,
/// `--session-header`, `--client-ip-header`, a resource header) are read from
/// the configuration by `GateRequestReader`, not declared here.
enum GateHeaders {
    // What the proxy reports about the request it asks about.
    static let originalURI = HTTPField.Name("X-Original-URI")!
    static let forwardedURI = HTTPField.Name("X-Forwarded-Uri")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwardedMethod = HTTPField.Name("X-Forwarded-Method")!
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let cookiePath = HTTPField.Name("X-Token-Cookie-Path")!
    /// A Common Access Token's carrier (CTA-5007).
    static let commonAccessToken = HTTPField.Name(CATOrigin.headerName)!

    // The trace a request is served in (W3C Trace Context).
    static let traceParent = HTTPField.Name("traceparent")!
    static let traceState = HTTPField.Name("tracestate")!

    // The answer: the verdict and, on an allow, the token's values.
    static let status = HTTPField.Name("X-Token-Status")!
    static let kind = HTTPField.Name("X-Token-Kind")!
    static let requestor = HTTPField.Name("X-Token-Requestor")!
    static let resource = HTTPField.Name("X-Token-Resource")!
    static let mvpd = HTTPField.Name("X-Token-Mvpd")!
    static let expires = HTTPField.Name("X-Token-Expires")!
    static let session = HTTPField.Name("X-Token-Session")!
    static let reason = HTTPField.Name("X-Token-Reason")!
    static let setCookie = HTTPField.Name("X-Token-Set-Cookie")!
}
