/// Bounds on what the reply decoder accepts from a server, in one value.
///
/// The store's replies are a few bytes (`+OK`, `$-1`, an error line); the
/// defaults leave room for `INFO` and `HELLO` and still bound a hostile or
/// broken server's reply to a few MiB of memory.
public struct RESPLimits: Sendable, Hashable {
    /// A simple string, error, integer or length line, type byte included, CR LF excluded.
    public var maxLineBytes: Int
    /// One bulk string's payload.
    public var maxBulkBytes: Int
    /// Elements of one array.
    public var maxArrayCount: Int
    /// Arrays open inside one another (1: an array of scalars).
    public var maxNestingDepth: Int
    /// All the bytes of one reply, nested elements included.
    public var maxReplyBytes: Int

    public init(
        maxLineBytes: Int = 16 * 1024,
        maxBulkBytes: Int = 1024 * 1024,
        maxArrayCount: Int = 4096,
        maxNestingDepth: Int = 8,
        maxReplyBytes: Int = 2 * 1024 * 1024
    ) {
        precondition(
            maxLineBytes >= 1 && maxBulkBytes >= 0 && maxArrayCount >= 0 && maxNestingDepth >= 0 && maxReplyBytes >= 1,
            "RESP limits must not be negative"
        )
        self.maxLineBytes = maxLineBytes
        self.maxBulkBytes = maxBulkBytes
        self.maxArrayCount = maxArrayCount
        self.maxNestingDepth = maxNestingDepth
        self.maxReplyBytes = maxReplyBytes
    }

    public static let `default` = RESPLimits()
}
