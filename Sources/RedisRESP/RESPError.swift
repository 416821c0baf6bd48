/// Why a byte stream is not RESP2, and where: the stream offset of the byte
/// (or of the reply or line) at fault, counted from the first byte fed.
///
/// Equality is on the code and offset; the message is for people.
public struct RESPError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A line starts with a byte that is no RESP type (or is empty).
        case invalidTypeByte
        /// A RESP3 type (`_`, `,`, `#`, `%`, `~`, `>`…) on a RESP2 connection.
        case unsupportedType
        /// A CR not followed by LF.
        case malformedLineEnd
        /// An LF with no CR before it.
        case bareLineFeed
        /// A line longer than ``RESPLimits/maxLineBytes``.
        case lineTooLong
        /// An integer or length that is not `-?[0-9]+` in 64 bits, or a negative length other than -1.
        case malformedInteger
        /// A bulk string longer than ``RESPLimits/maxBulkBytes``.
        case bulkTooLong
        /// A bulk string's payload not followed by CR LF.
        case missingBulkTerminator
        /// An array longer than ``RESPLimits/maxArrayCount``.
        case arrayTooLong
        /// Arrays nested deeper than ``RESPLimits/maxNestingDepth``.
        case nestingTooDeep
        /// A reply longer than ``RESPLimits/maxReplyBytes``.
        case replyTooLarge
    }

    public let code: Code
    public let offset: Int
    public let message: String

    public init(_ code: Code, offset: Int, _ message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "byte \(offset): error: \(message) [\(code.rawValue)]" }

    public static func == (lhs: RESPError, rhs: RESPError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }
}
