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

    /// A stable code, part of the JSON output (``ErrorCode``: match the codes
    /// you know and keep a `default`).
    public typealias Code = ErrorCode<TokenError>

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

extension ErrorCode where Domain == TokenError {
    // transport
    /// The input holds no token: empty, or only white space.
    public static var emptyInput: Self { Self("emptyInput") }
    /// The record is larger than ``DecoderConfiguration/maxRecordBytes``.
    public static var inputTooLarge: Self { Self("inputTooLarge") }
    /// Not UTF-8: a byte order mark or XML declaration names another encoding.
    public static var unsupportedEncoding: Self { Self("unsupportedEncoding") }
    /// A character outside the Base64 (or Base64url) alphabet, or bad padding.
    public static var invalidBase64: Self { Self("invalidBase64") }
    /// A space where Base64 has `+`: the token lost its `+` in a query string (never repaired by `verify`).
    public static var unencodedPlus: Self { Self("unencodedPlus") }
    /// A `%` not followed by two hex digits.
    public static var invalidPercentEncoding: Self { Self("invalidPercentEncoding") }
    /// After transport decoding, the bytes are not an XML token.
    public static var notXML: Self { Self("notXML") }
    /// The input starts like a REST JSON document but is not valid JSON (RFC 8259).
    public static var invalidJSON: Self { Self("invalidJSON") }
    /// A REST JSON document, or one of its decisions, carries no `serializedToken`.
    public static var jsonWithoutToken: Self { Self("jsonWithoutToken") }
    /// A URL or query string without the parameter that should hold the token.
    public static var tokenParameterMissing: Self { Self("tokenParameterMissing") }
    /// One token was expected, and the input holds several.
    public static var severalTokens: Self { Self("severalTokens") }
    /// JSON nested deeper than ``DecoderConfiguration/maxJSONDepth``.
    public static var jsonTooDeep: Self { Self("jsonTooDeep") }
    /// A JSON string, number or member count beyond its limit in ``DecoderConfiguration``.
    public static var jsonLimitExceeded: Self { Self("jsonLimitExceeded") }
    /// A REST envelope names a member twice, or mixes v1 and v2 members: never "pick one".
    public static var ambiguousEnvelope: Self { Self("ambiguousEnvelope") }
    // framing
    /// No `signatureInfo` block.
    public static var missingSignatureBlock: Self { Self("missingSignatureBlock") }
    /// More than one `signatureInfo` block, nested ones included.
    public static var duplicateSignatureBlock: Self { Self("duplicateSignatureBlock") }
    /// A `signatureInfo` block that neither closes nor meets the legacy terminator.
    public static var unterminatedSignatureBlock: Self { Self("unterminatedSignatureBlock") }
    /// A `signatureInfo` block with markup inside.
    public static var invalidSignatureBlock: Self { Self("invalidSignatureBlock") }
    /// No token element (`authToken`, `shortAuthorizationToken`, `simpleAuthenticationToken`, `simpleAuthorizationToken`).
    public static var missingTokenElement: Self { Self("missingTokenElement") }
    /// More than one token element, nested ones included.
    public static var duplicateTokenElement: Self { Self("duplicateTokenElement") }
    /// A token element that does not close.
    public static var unterminatedTokenElement: Self { Self("unterminatedTokenElement") }
    /// Anything beside the signature block and the token element at the top level.
    public static var unexpectedTopLevelContent: Self { Self("unexpectedTopLevelContent") }
    /// An XML declaration that is malformed or not at the very start.
    public static var invalidXMLDeclaration: Self { Self("invalidXMLDeclaration") }
    /// A DOCTYPE: refused, so no entity is ever declared or fetched.
    public static var doctypeForbidden: Self { Self("doctypeForbidden") }
    /// A comment, anywhere.
    public static var commentForbidden: Self { Self("commentForbidden") }
    /// A processing instruction, anywhere but the leading XML declaration.
    public static var processingInstructionForbidden: Self { Self("processingInstructionForbidden") }
    // parsing
    /// libxml2 refused the token element as not well-formed.
    public static var malformedXML: Self { Self("malformedXML") }
    /// An entity reference other than the five predefined ones and character references.
    public static var entityForbidden: Self { Self("entityForbidden") }
    /// Bytes that are not valid UTF-8.
    public static var invalidUTF8: Self { Self("invalidUTF8") }
    /// A token larger than ``DecoderConfiguration/maxTokenBytes``.
    public static var tokenTooLarge: Self { Self("tokenTooLarge") }
    /// Elements nested deeper than ``DecoderConfiguration/maxDepth``.
    public static var depthLimitExceeded: Self { Self("depthLimitExceeded") }
    /// More elements than ``DecoderConfiguration/maxElementCount``.
    public static var elementCountLimitExceeded: Self { Self("elementCountLimitExceeded") }
    /// More attributes and namespace declarations than allowed per element or per token.
    public static var attributeLimitExceeded: Self { Self("attributeLimitExceeded") }
    /// A field or attribute longer than ``DecoderConfiguration/maxFieldBytes``.
    public static var fieldTooLong: Self { Self("fieldTooLong") }
    /// Text and elements mixed in one field.
    public static var mixedContent: Self { Self("mixedContent") }
    /// A top-level element that is none of the token roots.
    public static var unknownTokenRoot: Self { Self("unknownTokenRoot") }
    // model
    /// A known field given twice.
    public static var duplicateField: Self { Self("duplicateField") }
    /// A required field is missing.
    public static var missingField: Self { Self("missingField") }
    /// A field whose value has the wrong shape (a date, a ttl, a fingerprint).
    public static var invalidFieldValue: Self { Self("invalidFieldValue") }
    /// A Media RSS resource with more than one channel, item, or title or guid in one scope (docs/DESIGN.md#the-rules-of-the-checks).
    public static var ambiguousMediaRSS: Self { Self("ambiguousMediaRSS") }

    /// Every code this version of the library can give.
    public static var allCases: [Self] {
        [
            .emptyInput, .tokenParameterMissing, .inputTooLarge, .unsupportedEncoding, .invalidBase64, .unencodedPlus, .invalidPercentEncoding,
            .notXML, .invalidJSON, .jsonWithoutToken, .severalTokens, .jsonTooDeep, .jsonLimitExceeded, .ambiguousEnvelope, .missingSignatureBlock,
            .duplicateSignatureBlock, .unterminatedSignatureBlock, .invalidSignatureBlock, .missingTokenElement, .duplicateTokenElement,
            .unterminatedTokenElement, .unexpectedTopLevelContent, .invalidXMLDeclaration, .doctypeForbidden, .commentForbidden,
            .processingInstructionForbidden, .malformedXML, .entityForbidden, .invalidUTF8, .tokenTooLarge, .depthLimitExceeded,
            .elementCountLimitExceeded, .attributeLimitExceeded, .fieldTooLong, .mixedContent, .unknownTokenRoot, .duplicateField, .missingField,
            .invalidFieldValue, .ambiguousMediaRSS,
        ]
    }
}
