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
    /// Largest REST JSON document, which has to be held whole to be parsed.
    public var maxJSONDocumentBytes: Int = 32 * 1024 * 1024
    /// Repair a Base64 token whose `+` arrived as a space (an unencoded query
    /// string). Off by default: verification must never repair silently.
    /// When on, the decoded token carries a warning saying it was repaired.
    public var repairsSpacesAsPlus: Bool = false
    /// The query parameters that may hold the token when a whole URL or query
    /// string is given (SPEC §2, "What people paste"), tried in this order.
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
