/// Where in the input a problem was found.
///
/// `byteOffset` is 0-based and counts bytes of what the failing stage read:
/// the record as given for transport errors, the decoded XML for framing,
/// parsing and model errors. `line` and `column` (1-based) are given for XML.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Byte offset from the start of the decoded XML (or of the record, for transport errors).
    public var byteOffset: Int
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column in bytes, when known.
    public var column: Int?

    /// A location; line and column when the caller knows them.
    public init(byteOffset: Int, line: Int? = nil, column: Int? = nil) {
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
    }

    /// Computes line and column of `offset` in `bytes` (columns count bytes).
    init(offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        var index = 0
        while index < end {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        self.init(byteOffset: offset, line: line, column: offset - lineStart + 1)
    }

    init(offset: Int, in bytes: [UInt8]) {
        self = bytes.withUnsafeBufferPointer { SourceLocation(offset: offset, in: $0) }
    }

    public var description: String {
        if let line, let column { return "\(line):\(column)" }
        return "byte \(byteOffset)"
    }
}

/// Every way a token can fail to decode, as a value the caller can switch on.
///
/// Two errors are equal when their ``code`` is equal, so tests and callers can
/// match on the cause without depending on message wording or exact offsets.
public struct TokenError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The pipeline stage that refused the input.
    public enum Stage: String, Sendable, Hashable, Codable {
        case transport, framing, parsing, model
    }

    /// Stable codes: their raw values are part of the JSON output and never change meaning.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        // transport
        case emptyInput
        case inputTooLarge
        case unsupportedEncoding
        case invalidBase64
        case unencodedPlus
        case invalidPercentEncoding
        case notXML
        case invalidJSON
        case jsonWithoutToken
        /// A URL or query string without the parameter that should hold the token.
        case tokenParameterMissing
        /// One token was expected, and the input holds several.
        case severalTokens
        // framing
        case missingSignatureBlock
        case duplicateSignatureBlock
        case unterminatedSignatureBlock
        case invalidSignatureBlock
        case missingTokenElement
        case duplicateTokenElement
        case unterminatedTokenElement
        case unexpectedTopLevelContent
        case invalidXMLDeclaration
        case doctypeForbidden
        case commentForbidden
        case processingInstructionForbidden
        // parsing
        case malformedXML
        case entityForbidden
        case invalidUTF8
        case tokenTooLarge
        case depthLimitExceeded
        case elementCountLimitExceeded
        case fieldTooLong
        case mixedContent
        case unknownTokenRoot
        // model
        case duplicateField
        case missingField
        case invalidFieldValue
    }

    /// What went wrong, stable across releases: tests and scripts compare this.
    public var code: Code
    /// The pipeline stage that found the error.
    public var stage: Stage
    /// For people; may quote input (escape it before a terminal or a log).
    public var message: String
    /// Where in the input, when it is known.
    public var location: SourceLocation?
    /// The token's fields that were read before the error, in document order
    /// (a duplicate field, a bad date and malformed XML all stop a parse that
    /// has already read some): `inspect` shows them, because they are often
    /// what a person needs to see why. Filled only on the error path; not
    /// encoded, and not part of equality.
    public var fieldsBeforeError: [TokenField] = []

    private enum CodingKeys: String, CodingKey { case code, stage, message, location }

    /// An error with its code, stage, message and location.
    public init(_ code: Code, stage: Stage, _ message: String, at location: SourceLocation? = nil) {
        self.code = code
        self.stage = stage
        self.message = message
        self.location = location
    }

    public static func == (lhs: TokenError, rhs: TokenError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Reads like a compiler diagnostic: `3:14: error: field 'ttl' appears twice [duplicateField]`.
    public var description: String {
        let prefix = location.map { "\($0): " } ?? ""
        return "\(prefix)error: \(message) [\(code.rawValue)]"
    }
}
