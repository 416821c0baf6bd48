/// One value of a token, as (path, text) in document order.
///
/// The path is relative to the token root: `requestorID`,
/// `simpleTokenDeviceID/simpleTokenFingerprint`, and `…/@name` for an
/// attribute (`@name` on the root). The value is the text exactly as
/// decoded: CDATA unwrapped, entity and character references resolved,
/// nothing trimmed. Unknown elements are kept this way, so a newer token
/// format still decodes and shows.
public struct TokenField: Sendable, Hashable {
    /// Element path relative to the root (`a/b`, `a/@attr` for an attribute).
    public var path: String
    /// The text exactly as decoded (CDATA unwrapped, entities resolved).
    public var value: String
    /// Where the element started, for diagnostics (1-based, relative to the decoded XML).
    public var line: Int
    /// 1-based column where the element started.
    public var column: Int

    /// A field at a path with its value and where it started.
    public init(path: String, value: String, line: Int = 0, column: Int = 0) {
        self.path = path
        self.value = value
        self.line = line
        self.column = column
    }

    /// True for an attribute (`@name` in the path).
    public var isAttribute: Bool { path.hasPrefix("@") || path.contains("/@") }
}

/// The token element as libxml2 read it: its root name and every field.
struct ParsedElement: Sendable {
    var root: String
    var fields: [TokenField]
    /// Paths of the elements below the root that have child elements, in the
    /// order they end; only when the parse was asked to record them.
    var containerPaths: [String] = []
}
