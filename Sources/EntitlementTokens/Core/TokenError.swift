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

    /// A stable code: its raw value is part of the JSON output and never
    /// changes meaning. A struct, not an enum, so that new codes can be added
    /// without breaking a caller's `switch` (which matches the codes it knows
    /// and has a `default`), as swift-certificates' `ErrorCode` does.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code as it appears in JSON output (`"invalidBase64"`).
        public let rawValue: String

        /// A code by its raw value, including one a newer library gives.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }
        // transport
        /// The input holds no token: empty, or only white space.
        public static let emptyInput = Code("emptyInput")
        /// The record is larger than ``DecoderConfiguration/maxRecordBytes``.
        public static let inputTooLarge = Code("inputTooLarge")
        /// Not UTF-8: a byte order mark or XML declaration names another encoding.
        public static let unsupportedEncoding = Code("unsupportedEncoding")
        /// A character outside the Base64 (or Base64url) alphabet, or bad padding.
        public static let invalidBase64 = Code("invalidBase64")
        /// A space where Base64 has `+`: the token lost its `+` in a query string (never repaired by `verify`).
        public static let unencodedPlus = Code("unencodedPlus")
        /// A `%` not followed by two hex digits.
        public static let invalidPercentEncoding = Code("invalidPercentEncoding")
        /// After transport decoding, the bytes are not an XML token.
        public static let notXML = Code("notXML")
        /// The input starts like a REST JSON document but is not valid JSON (RFC 8259).
        public static let invalidJSON = Code("invalidJSON")
        /// A REST JSON document, or one of its decisions, carries no `serializedToken`.
        public static let jsonWithoutToken = Code("jsonWithoutToken")
        /// A URL or query string without the parameter that should hold the token.
        public static let tokenParameterMissing = Code("tokenParameterMissing")
        /// One token was expected, and the input holds several.
        public static let severalTokens = Code("severalTokens")
        /// JSON nested deeper than ``DecoderConfiguration/maxJSONDepth``.
        public static let jsonTooDeep = Code("jsonTooDeep")
        /// A JSON string, number or member count beyond its limit in ``DecoderConfiguration``.
        public static let jsonLimitExceeded = Code("jsonLimitExceeded")
        /// A REST envelope names a member twice, or mixes v1 and v2 members: never "pick one".
        public static let ambiguousEnvelope = Code("ambiguousEnvelope")
        // framing
        /// No `signatureInfo` block.
        public static let missingSignatureBlock = Code("missingSignatureBlock")
        /// More than one `signatureInfo` block, nested ones included.
        public static let duplicateSignatureBlock = Code("duplicateSignatureBlock")
        /// A `signatureInfo` block that neither closes nor meets the legacy terminator.
        public static let unterminatedSignatureBlock = Code("unterminatedSignatureBlock")
        /// A `signatureInfo` block with markup inside.
        public static let invalidSignatureBlock = Code("invalidSignatureBlock")
        /// No token element (`authToken`, `shortAuthorizationToken`, `simpleAuthenticationToken`, `simpleAuthorizationToken`).
        public static let missingTokenElement = Code("missingTokenElement")
        /// More than one token element, nested ones included.
        public static let duplicateTokenElement = Code("duplicateTokenElement")
        /// A token element that does not close.
        public static let unterminatedTokenElement = Code("unterminatedTokenElement")
        /// Anything beside the signature block and the token element at the top level.
        public static let unexpectedTopLevelContent = Code("unexpectedTopLevelContent")
        /// An XML declaration that is malformed or not at the very start.
        public static let invalidXMLDeclaration = Code("invalidXMLDeclaration")
        /// A DOCTYPE: refused, so no entity is ever declared or fetched.
        public static let doctypeForbidden = Code("doctypeForbidden")
        /// A comment, anywhere.
        public static let commentForbidden = Code("commentForbidden")
        /// A processing instruction, anywhere but the leading XML declaration.
        public static let processingInstructionForbidden = Code("processingInstructionForbidden")
        // parsing
        /// libxml2 refused the token element as not well-formed.
        public static let malformedXML = Code("malformedXML")
        /// An entity reference other than the five predefined ones and character references.
        public static let entityForbidden = Code("entityForbidden")
        /// Bytes that are not valid UTF-8.
        public static let invalidUTF8 = Code("invalidUTF8")
        /// A token larger than ``DecoderConfiguration/maxTokenBytes``.
        public static let tokenTooLarge = Code("tokenTooLarge")
        /// Elements nested deeper than ``DecoderConfiguration/maxDepth``.
        public static let depthLimitExceeded = Code("depthLimitExceeded")
        /// More elements than ``DecoderConfiguration/maxElementCount``.
        public static let elementCountLimitExceeded = Code("elementCountLimitExceeded")
        /// More attributes and namespace declarations than allowed per element or per token.
        public static let attributeLimitExceeded = Code("attributeLimitExceeded")
        /// A field or attribute longer than ``DecoderConfiguration/maxFieldBytes``.
        public static let fieldTooLong = Code("fieldTooLong")
        /// Text and elements mixed in one field.
        public static let mixedContent = Code("mixedContent")
        /// A top-level element that is none of the token roots.
        public static let unknownTokenRoot = Code("unknownTokenRoot")
        // model
        /// A known field given twice.
        public static let duplicateField = Code("duplicateField")
        /// A required field is missing.
        public static let missingField = Code("missingField")
        /// A field whose value has the wrong shape (a date, a ttl, a fingerprint).
        public static let invalidFieldValue = Code("invalidFieldValue")
        /// A Media RSS resource with more than one channel, item, or title or guid in one scope (docs/DESIGN.md#the-rules-of-the-checks).
        public static let ambiguousMediaRSS = Code("ambiguousMediaRSS")

        /// Every code this version of the library can give.
        public static let allCases: [Code] = [
            .emptyInput, .tokenParameterMissing, .inputTooLarge, .unsupportedEncoding, .invalidBase64, .unencodedPlus, .invalidPercentEncoding, .notXML, .invalidJSON, .jsonWithoutToken, .severalTokens, .jsonTooDeep, .jsonLimitExceeded, .ambiguousEnvelope, .missingSignatureBlock, .duplicateSignatureBlock, .unterminatedSignatureBlock, .invalidSignatureBlock, .missingTokenElement, .duplicateTokenElement, .unterminatedTokenElement, .unexpectedTopLevelContent, .invalidXMLDeclaration, .doctypeForbidden, .commentForbidden, .processingInstructionForbidden, .malformedXML, .entityForbidden, .invalidUTF8, .tokenTooLarge, .depthLimitExceeded, .elementCountLimitExceeded, .attributeLimitExceeded, .fieldTooLong, .mixedContent, .unknownTokenRoot, .duplicateField, .missingField, .invalidFieldValue, .ambiguousMediaRSS,
        ]
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
