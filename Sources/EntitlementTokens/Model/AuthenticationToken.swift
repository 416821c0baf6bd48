/// An authentication (AuthN) token: proof that a device's user signed in with an MVPD.
public struct AuthenticationToken: Sendable, Hashable {
    /// The root element name.
    public static var root: String { ByteRules.simpleAuthenticationToken }

    /// `simpleTokenAuthenticationGuid`.
    public var guid: String?
    /// `simpleTokenRequestorID`.
    public var requestorID: String
    /// `simpleTokenDomainName`.
    public var domainName: String?
    /// `simpleTokenExpires`.
    public var expires: TokenTimestamp
    /// How the expiry date was written, to write it back the same way.
    public var expiresShape: TokenDateParser.Shape
    /// `simpleTokenMsoID`.
    public var mvpdID: String?
    /// `simpleTokenDeviceID/simpleTokenFingerprint`.
    public var fingerprint: String?
    /// `simpleSamlSessionIndex`, when present.
    public var samlSessionIndex: String?
    /// `simpleSamlNameID`, when present.
    public var samlNameID: String?
    /// `simpleAuthorizedResources/simpleAuthorizedResource/@simpleResourceID`, in order.
    public var authorizedResources: [String]

    /// In slot order (see ``KnownFields``).
    static let knownPaths = [
        "simpleTokenAuthenticationGuid", "simpleTokenRequestorID", "simpleTokenDomainName", "simpleTokenExpires",
        "simpleTokenMsoID", "simpleTokenDeviceID/simpleTokenFingerprint", "simpleSamlSessionIndex", "simpleSamlNameID",
    ]
    static let authorizedResourcePath = "simpleAuthorizedResources/simpleAuthorizedResource/@simpleResourceID"

    init(fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        guid = known.value(0)
        requestorID = try known.requiredValue(1, root: Self.root)
        domainName = known.value(2)
        (expires, expiresShape) = try known.timestamp(3, root: Self.root)
        mvpdID = known.value(4)
        fingerprint = try known.fingerprint(5)
        samlSessionIndex = known.value(6)
        samlNameID = known.value(7)
        authorizedResources = fields.filter { $0.path.hasSameUTF8(as: Self.authorizedResourcePath) }.map(\.value)
    }
}
