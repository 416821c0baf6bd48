/// An authorization (AuthZ) token: one requestor may play one resource until a date.
public struct AuthorizationToken: Sendable, Hashable {
    public static let root = "simpleAuthorizationToken"

    public var requestorID: String
    public var resourceID: String
    /// `simpleTokenTTL`: an absolute date, despite the name.
    public var expires: TokenTimestamp
    public var expiresShape: TokenDateParser.Shape
    public var mvpdID: String?
    public var fingerprint: String?

    static let knownPaths = [
        "simpleTokenRequestorID", "simpleTokenResourceID", "simpleTokenTTL", "simpleTokenMsoID",
        "simpleTokenDeviceID/simpleTokenFingerprint",
    ]

    init(fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        requestorID = try known.required("simpleTokenRequestorID", root: Self.root).value
        resourceID = try known.required("simpleTokenResourceID", root: Self.root).value
        (expires, expiresShape) = try known.timestamp("simpleTokenTTL", root: Self.root)
        mvpdID = known.optional("simpleTokenMsoID")?.value
        fingerprint = try known.fingerprint("simpleTokenDeviceID/simpleTokenFingerprint")
    }
}
