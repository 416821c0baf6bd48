/// Where in the input a problem was found.
///
/// `byteOffset` is 0-based and counts bytes of what the failing stage read:
/// the record as given for transport errors, the decoded XML for framing,
/// parsing and model errors. `line` and `column` (1-based) are given for XML.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var byteOffset: Int
    public var line: Int?
    public var column: Int?

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

    /// A stable code: its raw value is part of the JSON output and never
    /// changes meaning. A struct, not an enum, so that new codes can be added
    /// without breaking a caller's `switch` (which matches the codes it knows
    /// and has a `default`), as swift-certificates' `ErrorCode` does.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }
        // transport
        public static let emptyInput = Code("emptyInput")
        public static let inputTooLarge = Code("inputTooLarge")
        public static let unsupportedEncoding = Code("unsupportedEncoding")
        public static let invalidBase64 = Code("invalidBase64")
        public static let unencodedPlus = Code("unencodedPlus")
        public static let invalidPercentEncoding = Code("invalidPercentEncoding")
        public static let notXML = Code("notXML")
        public static let invalidJSON = Code("invalidJSON")
        public static let jsonWithoutToken = Code("jsonWithoutToken")
        /// One token was expected, and the input holds several.
        public static let severalTokens = Code("severalTokens")
        public static let jsonTooDeep = Code("jsonTooDeep")
        public static let jsonLimitExceeded = Code("jsonLimitExceeded")
        public static let ambiguousEnvelope = Code("ambiguousEnvelope")
        // framing
        public static let missingSignatureBlock = Code("missingSignatureBlock")
        public static let duplicateSignatureBlock = Code("duplicateSignatureBlock")
        public static let unterminatedSignatureBlock = Code("unterminatedSignatureBlock")
        public static let invalidSignatureBlock = Code("invalidSignatureBlock")
        public static let missingTokenElement = Code("missingTokenElement")
        public static let duplicateTokenElement = Code("duplicateTokenElement")
        public static let unterminatedTokenElement = Code("unterminatedTokenElement")
        public static let unexpectedTopLevelContent = Code("unexpectedTopLevelContent")
        public static let invalidXMLDeclaration = Code("invalidXMLDeclaration")
        public static let doctypeForbidden = Code("doctypeForbidden")
        public static let commentForbidden = Code("commentForbidden")
        public static let processingInstructionForbidden = Code("processingInstructionForbidden")
        // parsing
        public static let malformedXML = Code("malformedXML")
        public static let entityForbidden = Code("entityForbidden")
        public static let invalidUTF8 = Code("invalidUTF8")
        public static let tokenTooLarge = Code("tokenTooLarge")
        public static let depthLimitExceeded = Code("depthLimitExceeded")
        public static let elementCountLimitExceeded = Code("elementCountLimitExceeded")
        public static let attributeLimitExceeded = Code("attributeLimitExceeded")
        public static let fieldTooLong = Code("fieldTooLong")
        public static let mixedContent = Code("mixedContent")
        public static let unknownTokenRoot = Code("unknownTokenRoot")
        // model
        public static let duplicateField = Code("duplicateField")
        public static let missingField = Code("missingField")
        public static let invalidFieldValue = Code("invalidFieldValue")
        /// A Media RSS resource with more than one channel, item, or title or guid in one scope (SPEC §5).
        public static let ambiguousMediaRSS = Code("ambiguousMediaRSS")

        /// Every code this version of the library can give.
        public static let allCases: [Code] = [
            .emptyInput, .inputTooLarge, .unsupportedEncoding, .invalidBase64, .unencodedPlus, .invalidPercentEncoding, .notXML, .invalidJSON, .jsonWithoutToken, .severalTokens, .jsonTooDeep, .jsonLimitExceeded, .ambiguousEnvelope, .missingSignatureBlock, .duplicateSignatureBlock, .unterminatedSignatureBlock, .invalidSignatureBlock, .missingTokenElement, .duplicateTokenElement, .unterminatedTokenElement, .unexpectedTopLevelContent, .invalidXMLDeclaration, .doctypeForbidden, .commentForbidden, .processingInstructionForbidden, .malformedXML, .entityForbidden, .invalidUTF8, .tokenTooLarge, .depthLimitExceeded, .elementCountLimitExceeded, .attributeLimitExceeded, .fieldTooLong, .mixedContent, .unknownTokenRoot, .duplicateField, .missingField, .invalidFieldValue, .ambiguousMediaRSS,
        ]
    }

    public var code: Code
    public var stage: Stage
    public var message: String
    public var location: SourceLocation?

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
