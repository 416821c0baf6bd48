/// Every limit and lenience of the decoder, in one value with safe defaults.
///
/// The defaults are far above any token seen in the field (a real media token
/// is well under 2 KiB, four levels deep, with about ten fields) and far below
/// what would let one hostile record cost noticeable memory or time.
public struct DecoderConfiguration: Sendable, Hashable {
    /// Largest decoded XML token (signature block + token element), in bytes.
    public var maxTokenBytes: Int = 64 * 1024
    /// Deepest element nesting; the token root is depth 1.
    public var maxDepth: Int = 16
    /// Most elements in one token, the root included.
    public var maxElementCount: Int = 512
    /// Longest text of one field or attribute, in bytes after decoding.
    public var maxFieldBytes: Int = 32 * 1024
    /// Most attributes and namespace declarations, together, on one element and in one token
    /// (libxml2 compares each attribute of a start tag with every other: keep that small).
    public var maxAttributesPerElement: Int = 64
    /// Most attributes and namespace declarations, together, in one token element.
    public var maxAttributesPerToken: Int = 512
    /// Largest REST JSON document. It is scanned as it streams in, never held
    /// whole, so this bounds time rather than memory.
    public var maxJSONDocumentBytes: Int = 32 * 1024 * 1024
    /// Deepest nesting of JSON arrays and objects; the document's object is depth 1.
    /// A REST response is three or four deep.
    public var maxJSONDepth: Int = 32
    /// Longest JSON string or number, in bytes as written, except a `serializedToken`
    /// value, which may be as long as a record (``maxRecordBytes``).
    public var maxJSONStringBytes: Int = 64 * 1024
    /// Most values kept from one REST JSON document: envelope members and decisions.
    /// Members that are not used are skipped without being kept or counted.
    public var maxJSONMembers: Int = 4096
    /// Repair a Base64 token whose `+` arrived as a space (an unencoded query
    /// string). Off by default: verification must never repair silently.
    /// When on, the decoded token carries a warning saying it was repaired.
    public var repairsSpacesAsPlus: Bool = false
    /// The query parameters that may hold the token when a whole URL or query
    /// string is given (docs/DESIGN.md#what-people-paste), tried in this order.
    public var queryParameterNames: [String] = ["token", "auth"]

    /// Longest encoded record (one line of a file, or one argument). Percent-encoded
    /// Base64 can take four bytes per decoded byte; anything longer cannot decode
    /// to a token within ``maxTokenBytes``.
    public var maxRecordBytes: Int { maxTokenBytes * 4 + 1024 }

    /// The safe defaults above.
    public init() {}

    /// The safe defaults, shared.
    public static let `default` = DecoderConfiguration()
}
