/// The field rules of a token (docs/DESIGN.md#parsing-rules), applied to a document's parse events.
///
/// Plain Swift with no C in sight: ``LibXML2Driver`` feeds it libxml2's SAX
/// events as bounds-checked `Span`s, and the unit tests (`FieldReaderTests`)
/// feed it events of their own. It decides which elements and attributes
/// become which ``TokenField``s, and refuses mixed content, an unknown root,
/// and anything beyond the limits of ``DecoderConfiguration``: depth, element
/// count, attributes per element and per document, field size.
///
/// After a failure it ignores every further event; the driver stops libxml2.
struct FieldReader: ~Copyable {
    let configuration: DecoderConfiguration
    private var allowedRoots: Set<String> = []
    /// The same names as bytes, to recognise the root without making a String and hashing it.
    private var allowedRootNames: [(utf8: [UInt8], name: String)] = []

    private(set) var root: String?
    private(set) var fields: [TokenField] = []
    private(set) var failure: PendingFailure?
    private(set) var hasFailed = false
    private var recordingContainers = false
    private(set) var containerPaths: [String] = []

    /// `/`-joined path of the open elements below the root, as UTF-8.
    private var path = GrowableBytes(capacity: 256)
    private var frames: [Frame] = []
    /// The text of the innermost open element so far.
    private var text = GrowableBytes(capacity: 256)
    /// Scratch space for an attribute's name and path, reused.
    private var attributeName = GrowableBytes(capacity: 64)
    private var attributePath = GrowableBytes(capacity: 256)
    private var elementCount = 0
    /// The fields' paths and values as strings, reused from the documents before.
    private var recentStrings = RecentFieldStrings()
    /// Attributes and namespace declarations so far, for ``DecoderConfiguration/maxAttributesPerToken``.
    private var attributeCount = 0

    private struct Frame {
        /// Length of `path` before this element's name was appended.
        var parentPathLength: Int
        var hasChildren = false
        var line: Int
        var column: Int
    }

    /// An error plus the position (libxml2's line:column, columns in
    /// characters) it was found at, turned into a byte offset once the input is at hand.
    struct PendingFailure {
        var error: TokenError
        var line: Int
        var column: Int

        func located(in bytes: Span<UInt8>) -> TokenError {
            var error = error
            if line > 0 {
                error.location = SourceLocation(
                    byteOffset: SourcePositions.byteOffset(line: line, column: column, in: bytes),
                    line: line,
                    column: column
                )
            }
            return error
        }
    }

    init(configuration: DecoderConfiguration) {
        self.configuration = configuration
        frames.reserveCapacity(32)
    }

    /// Readies the reader for a new document whose root must be one of `allowedRoots`.
    /// With `recordingContainers`, the paths of elements that have child
    /// elements are kept too (``ParsedElement/containerPaths``).
    mutating func reset(allowedRoots: Set<String>, recordingContainers: Bool) {
        if allowedRoots != self.allowedRoots {
            self.allowedRoots = allowedRoots
            allowedRootNames = allowedRoots.sorted().map { (Array($0.utf8), $0) }
        }
        root = nil
        // Emptied in place when the last parsed element is gone (a decoder's
        // caller is usually done with a token before the next), a fresh array
        // of the same room when it still holds the fields: either way sized
        // for a typical token, so appending never regrows it.
        fields.removeAll(keepingCapacity: true)
        fields.reserveCapacity(16)
        failure = nil
        hasFailed = false
        path.removeAll()
        frames.removeAll(keepingCapacity: true)
        text.removeAll()
        elementCount = 0
        attributeCount = 0
        self.recordingContainers = recordingContainers
        if !containerPaths.isEmpty { containerPaths = [] }
    }

    /// The document read: its root and fields, or the first failure located in `bytes`.
    func result(in bytes: Span<UInt8>) throws(TokenError) -> ParsedElement {
        if let failure { throw failure.located(in: bytes) }
        guard let root else { throw TokenError(.missingTokenElement, stage: .parsing, "no element") }
        return ParsedElement(root: root, fields: fields, containerPaths: containerPaths)
    }

    /// Records the first failure; every later event is ignored.
    mutating func fail(_ code: TokenError.Code, _ message: String, line: Int, column: Int) {
        guard !hasFailed else { return }
        hasFailed = true
        failure = PendingFailure(error: TokenError(code, stage: .parsing, message), line: line, column: column)
    }

    // MARK: - Events

    /// An element starts at `line`:`column`; `attributeCount` namespace
    /// declarations and attributes follow as ``namespaceDeclaration(prefix:uri:)``
    /// and ``attribute(localName:prefix:value:)`` events when this returns true.
    /// An empty `prefix` is no prefix.
    mutating func startElement(localName: Span<UInt8>, prefix: Span<UInt8>, attributeCount: Int, line: Int, column: Int) -> Bool {
        guard !hasFailed else { return false }
        elementCount += 1
        // Every failure below is made out of line (`fail…`): the events come
        // about thirty times per token, and their error messages' string
        // interpolations would make each of them set up a large frame.
        if elementCount > configuration.maxElementCount {
            failElementCount(line: line, column: column)
            return false
        }
        if frames.count >= configuration.maxDepth {
            failDepth(line: line, column: column)
            return false
        }
        let parentPathLength = path.count
        if frames.isEmpty {
            if prefix.isEmpty, let known = knownRoot(localName) {
                root = known
            } else {
                guard otherRoot(localName, prefix, line: line, column: column) else { return false }
            }
        } else {
            if !frames[frames.count - 1].hasChildren {
                guard Self.isBlank(text) else {
                    failMixedContent(line: line, column: column)
                    return false
                }
                frames[frames.count - 1].hasChildren = true
            }
            text.removeAll()
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            Self.appendQualifiedName(localName, prefix, to: &path)
        }
        frames.append(Frame(parentPathLength: parentPathLength, line: line, column: column))
        guard attributeCount > 0 else { return true }
        return countAttributes(attributeCount, line: line, column: column)
    }

    /// A namespace declaration of the element just started (empty `prefix`: the default namespace).
    mutating func namespaceDeclaration(prefix: Span<UInt8>, uri: Span<UInt8>) -> Bool {
        guard !hasFailed else { return false }
        // Namespace declarations are attributes as written; keep them like any unknown attribute.
        attributeName.removeAll()
        attributeName.append("xmlns")
        if !prefix.isEmpty {
            attributeName.append(UInt8(ascii: ":"))
            attributeName.append(prefix)
        }
        return addAttribute(value: uri)
    }

    /// An attribute of the element just started, its value as libxml2 hands it over.
    mutating func attribute(localName: Span<UInt8>, prefix: Span<UInt8>, value: Span<UInt8>) -> Bool {
        guard !hasFailed else { return false }
        attributeName.removeAll()
        Self.appendQualifiedName(localName, prefix, to: &attributeName)
        return addAttribute(value: value)
    }

    mutating func endElement(line: Int, column: Int) {
        guard !hasFailed, let frame = frames.popLast() else { return }
        if !frame.hasChildren && !frames.isEmpty {
            let position = 2 * fields.count
            fields.append(
                TokenField(
                    path: path.withSpan { recentStrings.string($0, at: position) },
                    value: text.withSpan { recentStrings.string($0, at: position + 1) },
                    line: frame.line,
                    column: frame.column
                )
            )
        } else if !Self.isBlank(text) {
            return failMixedContent(line: line, column: column)
        } else if recordingContainers, !frames.isEmpty {
            containerPaths.append(path.string)
        }
        text.removeAll()
        // Drop this element's name (and its separator) from the path.
        path.truncate(to: frame.parentPathLength)
    }

    /// Character data or a CDATA section's text, in one or several pieces.
    mutating func text(_ chunk: Span<UInt8>, line: Int, column: Int) {
        guard !hasFailed, !chunk.isEmpty, let top = frames.last else { return }
        if top.hasChildren {
            // Between child elements only white space (pretty printing) is allowed.
            guard Self.isBlank(chunk) else {
                return failMixedContent(line: line, column: column)
            }
            return
        }
        guard text.count + chunk.count <= configuration.maxFieldBytes else {
            return failFieldTooLong(line: line, column: column)
        }
        text.append(chunk)
    }

    // MARK: - Rules

    /// The allowed root whose name is `localName`, if one is.
    private func knownRoot(_ localName: Span<UInt8>) -> String? {
        for entry in allowedRootNames where ByteSearch.bytes(localName, equal: entry.utf8.span) {
            return entry.name
        }
        return nil
    }

    /// The root when it is not one of ``allowedRootNames`` as a plain name
    /// (a prefixed name, or not a token root at all): false after failing.
    @inline(never)
    private mutating func otherRoot(_ localName: Span<UInt8>, _ prefix: Span<UInt8>, line: Int, column: Int) -> Bool {
        var bytes = GrowableBytes()
        Self.appendQualifiedName(localName, prefix, to: &bytes)
        let name = bytes.string
        // By bytes: `Set<String>.contains` would take `authTo\u{212A}en`-like names for a root.
        guard allowedRootNames.contains(where: { $0.name.hasSameUTF8(as: name) }) else {
            fail(
                .unknownTokenRoot,
                "<\(name)> is not a token element (expected one of \(allowedRoots.sorted().joined(separator: ", ")))",
                line: line,
                column: column
            )
            return false
        }
        root = name
        return true
    }

    @inline(never)
    private mutating func failElementCount(line: Int, column: Int) {
        fail(.elementCountLimitExceeded, "more than \(configuration.maxElementCount) elements (maxElementCount)", line: line, column: column)
    }

    @inline(never)
    private mutating func failDepth(line: Int, column: Int) {
        fail(.depthLimitExceeded, "elements nested deeper than \(configuration.maxDepth) (maxDepth)", line: line, column: column)
    }

    @inline(never)
    private mutating func failMixedContent(line: Int, column: Int) {
        fail(
            .mixedContent,
            "element \(path.string.nonEmpty ?? "root") mixes text and elements",
            line: line,
            column: column
        )
    }

    @inline(never)
    private mutating func failFieldTooLong(line: Int, column: Int) {
        fail(
            .fieldTooLong,
            "field \(path.string.nonEmpty ?? "root") is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)",
            line: line,
            column: column
        )
    }

    /// Counts the element's namespace declarations and attributes against
    /// both limits (which count them together, as written): rare in tokens, so out of line.
    @inline(never)
    private mutating func countAttributes(_ count: Int, line: Int, column: Int) -> Bool {
        guard count <= configuration.maxAttributesPerElement else {
            fail(.attributeLimitExceeded, Self.attributesPerElementMessage(configuration), line: line, column: column)
            return false
        }
        attributeCount += count
        guard attributeCount <= configuration.maxAttributesPerToken else {
            fail(
                .attributeLimitExceeded,
                "more than \(configuration.maxAttributesPerToken) attributes and namespace declarations in the document (maxAttributesPerToken)",
                line: line,
                column: column
            )
            return false
        }
        return true
    }

    static func attributesPerElementMessage(_ configuration: DecoderConfiguration) -> String {
        "an element has more than \(configuration.maxAttributesPerElement) attributes and namespace declarations (maxAttributesPerElement)"
    }

    /// The per-element limit's error for the start tag at byte `offset`, found
    /// before parsing (``CrowdedStartTag``); located as libxml2 locates its errors.
    static func attributesPerElementError(_ configuration: DecoderConfiguration, at offset: Int, in bytes: Span<UInt8>) -> TokenError {
        TokenError(
            .attributeLimitExceeded,
            stage: .parsing,
            attributesPerElementMessage(configuration),
            at: SourcePositions.characterLocation(ofByte: offset, in: bytes)
        )
    }

    /// Adds the attribute named by `attributeName` at the current path, located at its element.
    private mutating func addAttribute(value: Span<UInt8>) -> Bool {
        let element = frames[frames.count - 1]
        let decoded = Self.attributeText(value)
        guard decoded.utf8.count <= configuration.maxFieldBytes else {
            fail(
                .fieldTooLong,
                "attribute \(attributeName.string) is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)",
                line: element.line,
                column: element.column
            )
            return false
        }
        attributePath.removeAll()
        path.withSpan { attributePath.append($0) }
        if !attributePath.isEmpty { attributePath.append(UInt8(ascii: "/")) }
        attributePath.append(UInt8(ascii: "@"))
        attributeName.withSpan { attributePath.append($0) }
        fields.append(
            TokenField(
                path: attributePath.string,
                value: decoded,
                line: element.line,
                column: element.column
            )
        )
        return true
    }

    private static let escapedAmpersand = Array("&#38;".utf8)

    /// An attribute value (or namespace URI) as the document means it. With
    /// entity substitution off, libxml2 hands `&amp;` and `&#38;` in an
    /// attribute value over as the five characters `&#38;`, for a tree builder
    /// to decode again; no other `&` can reach a value, so each `&#38;` here is
    /// one `&` (found by FuzzDecode: Fuzz/FailCases/FuzzDecode/attribute-amp-entity.xml).
    static func attributeText(_ value: Span<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            if value[index] == UInt8(ascii: "&"), index + escapedAmpersand.count <= value.count,
                escapedAmpersand.indices.allSatisfy({ value[index + $0] == escapedAmpersand[$0] })
            {
                out.append(UInt8(ascii: "&"))
                index += escapedAmpersand.count
            } else {
                out.append(value[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isBlank(_ bytes: borrowing GrowableBytes) -> Bool {
        bytes.withSpan { ByteRules.isBlank($0) }
    }

    private static func isBlank(_ bytes: Span<UInt8>) -> Bool {
        ByteRules.isBlank(bytes)
    }

    private static func appendQualifiedName(_ localName: Span<UInt8>, _ prefix: Span<UInt8>, to bytes: inout GrowableBytes) {
        if !prefix.isEmpty {
            bytes.append(prefix)
            bytes.append(UInt8(ascii: ":"))
        }
        bytes.append(localName)
    }
}
