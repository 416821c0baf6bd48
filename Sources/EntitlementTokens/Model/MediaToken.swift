/// A short media token: what a media server checks before it starts a stream.
///
/// Real servers send it as `<authToken>`; the vendor's documentation shows
/// `<shortAuthorizationToken>`. Both mean the same.
public struct MediaToken: Sendable, Hashable {
    /// The two root elements a media token is seen with.
    public enum Root: Sendable, Hashable, CaseIterable, RawRepresentable {
        case authToken, shortAuthorizationToken

        /// The element name (`ByteRules` holds each root name once).
        public var rawValue: String {
            switch self {
            case .authToken: ByteRules.authToken
            case .shortAuthorizationToken: ByteRules.shortAuthorizationToken
            }
        }

        public init?(rawValue: String) {
            switch rawValue {
            case ByteRules.authToken: self = .authToken
            case ByteRules.shortAuthorizationToken: self = .shortAuthorizationToken
            default: return nil
            }
        }
    }

    /// Which root element the token has.
    public var root: Root
    /// `sessionGUID`.
    public var sessionGUID: String?
    /// `requestorID`.
    public var requestorID: String
    /// Exactly as written: a bare id (`TNT`) or a Media RSS document.
    public var resourceID: String
    /// Lifetime in milliseconds from ``issueTime``.
    public var ttlMilliseconds: Int64
    /// `issueTime`.
    public var issueTime: TokenTimestamp
    /// How `issueTime` was written, to write it back the same way.
    public var issueTimeShape: TokenDateParser.Shape
    /// `issueTime + ttl`, checked for overflow when decoding.
    public var expiry: TokenTimestamp
    /// `mvpdId`.
    public var mvpdID: String?
    /// `proxyMvpdId`, when present.
    public var proxyMvpdID: String?

    /// In slot order (see ``KnownFields``).
    static let knownPaths = ["sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId", "proxyMvpdId"]

    init(root: Root, fields: [TokenField]) throws(TokenError) {
        let known = try KnownFields(fields, known: Self.knownPaths)
        let rootName = root.rawValue
        self.root = root
        sessionGUID = known.value(0)
        requestorID = try known.requiredValue(1, root: rootName)
        resourceID = try known.requiredValue(2, root: rootName)
        let ttlField = try known.required(3, root: rootName)
        ttlMilliseconds = try Self.milliseconds(ttlField)
        (issueTime, issueTimeShape) = try known.timestamp(4, root: rootName)
        guard let expiry = issueTime.adding(milliseconds: ttlMilliseconds) else {
            throw TokenError(
                .invalidFieldValue,
                stage: .model,
                "issueTime + ttl (\(ttlField.value) ms) is beyond 9999-12-31T23:59:59.999Z",
                at: KnownFields.location(of: ttlField)
            )
        }
        self.expiry = expiry
        mvpdID = known.value(5)
        proxyMvpdID = known.value(6)
    }

    /// A non-negative decimal integer that fits in 63 bits; nothing else (no sign, no spaces).
    static func milliseconds(_ field: TokenField) throws(TokenError) -> Int64 {
        let text = field.value
        // Every byte a digit, then the value, from the string's own UTF-8
        // (`allSatisfy` over a small string's `utf8` view costs more than the token's dates).
        let utf8 = text.utf8
        let parsed = decimalValue(utf8.span)
        guard let fitting = parsed else {
            throw TokenError(
                .invalidFieldValue,
                stage: .model,
                "ttl '\(text.prefix(40))' is not a non-negative decimal number of milliseconds",
                at: KnownFields.location(of: field)
            )
        }
        guard let value = fitting else {
            throw TokenError(
                .invalidFieldValue,
                stage: .model,
                "ttl '\(text.prefix(40))' does not fit in 63 bits",
                at: KnownFields.location(of: field)
            )
        }
        return value
    }

    /// nil when `bytes` are empty or not all digits; `.some(nil)` when the
    /// digits do not fit in 63 bits.
    private static func decimalValue(_ bytes: Span<UInt8>) -> Int64?? {
        guard !bytes.isEmpty else { return .none }
        var value: Int64 = 0
        var fits = true
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte.isASCIIDigit else { return .none }
            if fits {
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
                if overflow1 || overflow2 { fits = false } else { value = sum }
            }
        }
        return .some(fits ? value : nil)
    }
}
