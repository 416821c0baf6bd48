/// An authentication (AuthN) token: proof that a device's user signed in with an MVPD.
public struct AuthenticationToken: Sendable, Hashable {
    public static let root = "simpleAuthenticationToken"

    public var guid: String?
    public var requestorID: String
    public var domainName: String?
    public var expires: TokenTimestamp
    public var expiresShape: TokenDateParser.Shape
    public var mvpdID: String?
    public var fingerprint: String?
    public var samlSessionIndex: String?
    public var samlNameID: String?
    /// `simpleAuthorizedResources/simpleAuthorizedResource/@simpleResourceID`, in order.
    public var authorizedResources: [String]

    static let knownPaths = [
        "simpleTokenAuthenticationGuid", "simpleTokenRequestorID", "simpleTokenDomainName", "simpleTokenExpires",
        "simpleTokenMsoID", "simpleTokenDeviceID/simpleTokenFingerprint", "simpleSamlSessionIndex", "simpleSamlNameID",
    ]
    static let authorizedResourcePath = "simpleAuthorizedResources/simpleAuthorizedResource/@simpleResourceID"

    init(fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        guid = known.optional("simpleTokenAuthenticationGuid")?.value
        requestorID = try known.required("simpleTokenRequestorID", root: Self.root).value
        domainName = known.optional("simpleTokenDomainName")?.value
        (expires, expiresShape) = try known.timestamp("simpleTokenExpires", root: Self.root)
        mvpdID = known.optional("simpleTokenMsoID")?.value
        fingerprint = try known.fingerprint("simpleTokenDeviceID/simpleTokenFingerprint")
        samlSessionIndex = known.optional("simpleSamlSessionIndex")?.value
        samlNameID = known.optional("simpleSamlNameID")?.value
        authorizedResources = fields.filter { $0.path == Self.authorizedResourcePath }.map(\.value)
    }
}
