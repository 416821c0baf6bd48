/// An authorization (AuthZ) token: one requestor may play one resource until a date.
public struct AuthorizationToken: Sendable, Hashable {
    /// The root element name.
    public static var root: String { ByteRules.simpleAuthorizationToken }

    /// `simpleTokenRequestorID`.
    public var requestorID: String
    /// `simpleTokenResourceID`.
    public var resourceID: String
    /// `simpleTokenTTL`: an absolute date, despite the name.
    public var expires: TokenTimestamp
    /// How the expiry date was written, to write it back the same way.
    public var expiresShape: TokenDateParser.Shape
    /// `simpleTokenMsoID`.
    public var mvpdID: String?
    /// `simpleTokenDeviceID/simpleTokenFingerprint`.
    public var fingerprint: String?

    /// In slot order (see ``KnownFields``).
    static let knownPaths = [
        "simpleTokenRequestorID", "simpleTokenResourceID", "simpleTokenTTL", "simpleTokenMsoID",
        "simpleTokenDeviceID/simpleTokenFingerprint",
    ]

    init(fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        requestorID = try known.requiredValue(0, root: Self.root)
        resourceID = try known.requiredValue(1, root: Self.root)
        (expires, expiresShape) = try known.timestamp(2, root: Self.root)
        mvpdID = known.value(3)
        fingerprint = try known.fingerprint(4)
    }
}
