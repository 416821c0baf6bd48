/// A short media token: what a media server checks before it starts a stream.
///
/// Real servers send it as `<authToken>`; the vendor's documentation shows
/// `<shortAuthorizationToken>`. Both mean the same.
public struct MediaToken: Sendable, Hashable {
    public enum Root: String, Sendable, Hashable, CaseIterable {
        case authToken, shortAuthorizationToken
    }

    public var root: Root
    public var sessionGUID: String?
    public var requestorID: String
    /// Exactly as written: a bare id (`TNT`) or a Media RSS document.
    public var resourceID: String
    /// Lifetime in milliseconds from ``issueTime``.
    public var ttlMilliseconds: Int64
    public var issueTime: TokenTimestamp
    public var issueTimeShape: TokenDateParser.Shape
    /// `issueTime + ttl`, checked for overflow when decoding.
    public var expiry: TokenTimestamp
    public var mvpdID: String?
    public var proxyMvpdID: String?

    static let knownPaths = ["sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId", "proxyMvpdId"]

    init(root: Root, fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        let rootName = root.rawValue
        self.root = root
        sessionGUID = known.optional("sessionGUID")?.value
        requestorID = try known.required("requestorID", root: rootName).value
        resourceID = try known.required("resourceID", root: rootName).value
        let ttlField = try known.required("ttl", root: rootName)
        ttlMilliseconds = try Self.milliseconds(ttlField)
        (issueTime, issueTimeShape) = try known.timestamp("issueTime", root: rootName)
        guard let expiry = issueTime.adding(milliseconds: ttlMilliseconds) else {
            throw TokenError(.invalidFieldValue, stage: .model,
                             "issueTime + ttl (\(ttlField.value) ms) is beyond 9999-12-31T23:59:59.999Z",
                             at: KnownFields.location(of: ttlField))
        }
        self.expiry = expiry
        mvpdID = known.optional("mvpdId")?.value
        proxyMvpdID = known.optional("proxyMvpdId")?.value
    }

    /// A non-negative decimal integer that fits in 63 bits; nothing else (no sign, no spaces).
    static func milliseconds(_ field: TokenField) throws(TokenError) -> Int64 {
        let text = field.value
        guard !text.isEmpty, text.utf8.allSatisfy(\.isASCIIDigit) else {
            throw TokenError(.invalidFieldValue, stage: .model,
                             "ttl '\(text.prefix(40))' is not a non-negative decimal number of milliseconds",
                             at: KnownFields.location(of: field))
        }
        guard let value = Int64(text) else {
            throw TokenError(.invalidFieldValue, stage: .model, "ttl '\(text.prefix(40))' does not fit in 63 bits",
                             at: KnownFields.location(of: field))
        }
        return value
    }
}
