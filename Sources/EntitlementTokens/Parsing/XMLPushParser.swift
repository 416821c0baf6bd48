internal import CLibXML2
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// libxml2's push (SAX2) parser, hardened for hostile tokens and reused across them.
///
/// One instance owns one `xmlParserCtxt` (style habit 1: one owner per C object)
/// and resets it per document with `xmlCtxtResetPush`, so creating the context
/// and its dictionary is paid once, not per token. Not thread-safe: use one per
/// thread (``TokenDecoder`` owns one).
///
/// What it refuses (SPEC §4): DOCTYPE and entity declarations, entity references
/// other than the five predefined ones (character references are fine),
/// comments, processing instructions, mixed content, and anything beyond the
/// limits of ``DecoderConfiguration``. It never loads anything (`XML_PARSE_NONET`,
/// no DTD loading, no entity substitution).
final class XMLPushParser {
    private let context: xmlParserCtxtPtr
    fileprivate let state: SAXState

    var configuration: DecoderConfiguration { state.configuration }

    init(configuration: DecoderConfiguration) {
        state = SAXState(configuration: configuration)
        var handler = xmlSAXHandler()
        Self.install(&handler)
        // libxml2 copies the handler; `state` is passed to every callback as `ctx`.
        context = xmlCreatePushParserCtxt(&handler, Unmanaged.passUnretained(state).toOpaque(), nil, 0, nil)!
        state.context = context
    }

    deinit {
        xmlFreeParserCtxt(context)
    }

    /// Parses one complete XML document (a token element, or a Media RSS document)
    /// whose root must be one of `allowedRoots`.
    ///
    /// `chunkSize` splits the bytes into several `xmlParseChunk` calls; the
    /// result must not depend on it (tests feed byte by byte). With
    /// `recordingContainers`, the paths of elements that have child elements
    /// are kept too (``ParsedElement/containerPaths``), for readers that must
    /// count elements, not only fields (a Media RSS document's items).
    func parse(_ bytes: UnsafeBufferPointer<UInt8>, allowedRoots: Set<String>, recordingContainers: Bool = false,
               chunkSize: Int = .max) throws(TokenError) -> ParsedElement {
        if bytes.count > state.configuration.maxTokenBytes {
            throw TokenError(.tokenTooLarge, stage: .parsing,
                             "\(bytes.count) bytes of XML; the limit is \(state.configuration.maxTokenBytes) (maxTokenBytes)")
        }
        // XML 1.0 §2.11: CR LF and a lone CR are read as LF before parsing.
        // libxml2 does that everywhere except in CDATA sections fed through its
        // push parser, which it hands over raw; so a field's value would depend
        // on whether the issuer wrapped it in CDATA (found by FuzzDecode:
        // Fuzz/FailCases/FuzzDecode/cdata-crlf-line-end.xml). The caller's
        // bytes, which are the signed bytes, stay as they are.
        if FrameScanner.index(of: 0x0D, in: bytes, from: 0) != nil {
            let normalized = Self.normalizingLineEnds(bytes)
            return try normalized.withUnsafeBufferPointer { (buffer) throws(TokenError) in
                try parse(buffer, allowedRoots: allowedRoots, recordingContainers: recordingContainers, chunkSize: chunkSize)
            }
        }
        if Self.mayHoldCrowdedStartTag(bytes, limit: state.configuration.maxAttributesPerElement),
           let start = CrowdedStartTag.find(in: bytes.span, limit: state.configuration.maxAttributesPerElement) {
            throw SAXState.attributesPerElementError(state.configuration, at: start, in: bytes)
        }
        state.reset(allowedRoots: allowedRoots, recordingContainers: recordingContainers)
        // No encoding name: the bytes are already validated UTF-8, and naming
        // "UTF-8" made libxml2 copy every chunk through a UTF-8→UTF-8 converter.
        xmlCtxtResetPush(context, nil, 0, nil, nil)
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_IGNORE_ENC.rawValue))
        context.pointee.replaceEntities = 0
        context.pointee.loadsubset = 0
        context.pointee.validate = 0

        var offset = 0
        let step = max(1, chunkSize)
        repeat {
            let length = min(step, bytes.count - offset)
            let last = offset + length == bytes.count
            let chunk = bytes.baseAddress.map { UnsafeRawPointer($0 + offset).assumingMemoryBound(to: CChar.self) }
            _ = xmlParseChunk(context, chunk, Int32(length), last ? 1 : 0)
            offset += length
            if state.failure != nil { break }
        } while offset < bytes.count
        if state.failure == nil, context.pointee.wellFormed == 0 {
            state.fail(.malformedXML, "the token element is not well-formed XML")
        }
        if let failure = state.failure {
            throw failure.located(in: bytes)
        }
        guard let root = state.root else {
            throw TokenError(.missingTokenElement, stage: .parsing, "no element")
        }
        return ParsedElement(root: root, fields: state.fields, containerPaths: state.containerPaths)
    }

    /// Whether some stretch of `bytes` from one `<` to the next holds more `=`
    /// than one start tag may have attributes: only then can a start tag be too
    /// crowded for libxml2 (see ``CrowdedStartTag``). A token has a handful of
    /// `=` in all, so this is usually a few `memchr`s over the whole token.
    static func mayHoldCrowdedStartTag(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> Bool {
        guard equalSigns(in: bytes, from: 0, to: bytes.count, moreThan: limit) else { return false }
        // Many in all (a token with hundreds of attributes, within the limits): stretch by stretch.
        var start = 0
        while start < bytes.count {
            let end = FrameScanner.index(of: UInt8(ascii: "<"), in: bytes, from: start + 1) ?? bytes.count
            if equalSigns(in: bytes, from: start, to: end, moreThan: limit) { return true }
            start = end
        }
        return false
    }

    private static func equalSigns(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, moreThan limit: Int) -> Bool {
        let stretch = UnsafeBufferPointer(rebasing: bytes[start..<end])
        var found = 0
        var index = 0
        while found <= limit, let next = FrameScanner.index(of: UInt8(ascii: "="), in: stretch, from: index) {
            found += 1
            index = next + 1
        }
        return found > limit
    }

    /// `bytes` with every CR LF and lone CR turned into LF (XML 1.0 §2.11).
    static func normalizingLineEnds(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0D {
                out.append(0x0A)
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
            } else {
                out.append(bytes[index])
            }
            index += 1
        }
        return out
    }

    /// Fills in the SAX2 callbacks. Closures here capture nothing: they reach
    /// the Swift state through the `ctx` pointer (style habit 3).
    private static func install(_ handler: inout xmlSAXHandler) {
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { ctx, localname, prefix, _, namespaceCount, namespaces, attributeCount, _, attributes in
            SAXState.with(ctx) {
                $0.startElement(localname: localname, prefix: prefix,
                                namespaceCount: Int(namespaceCount), namespaces: namespaces,
                                attributeCount: Int(attributeCount), attributes: attributes)
            }
        }
        handler.endElementNs = { ctx, _, _, _ in
            SAXState.with(ctx) { $0.endElement() }
        }
        handler.characters = { ctx, bytes, length in
            SAXState.with(ctx) { $0.text(bytes, Int(length)) }
        }
        handler.ignorableWhitespace = handler.characters
        handler.cdataBlock = { ctx, bytes, length in
            SAXState.with(ctx) { $0.text(bytes, Int(length)) }
        }
        handler.comment = { ctx, _ in
            SAXState.from(ctx).fail(.commentForbidden, "comments are not allowed in a token")
        }
        handler.processingInstruction = { ctx, _, _ in
            SAXState.from(ctx).fail(.processingInstructionForbidden, "processing instructions are not allowed in a token")
        }
        handler.internalSubset = { ctx, _, _, _ in
            SAXState.from(ctx).fail(.doctypeForbidden, "DOCTYPE is not allowed in a token")
        }
        handler.externalSubset = { ctx, _, _, _ in
            SAXState.from(ctx).fail(.doctypeForbidden, "DOCTYPE is not allowed in a token")
        }
        handler.entityDecl = { ctx, _, _, _, _, _ in
            SAXState.from(ctx).fail(.entityForbidden, "entity declarations are not allowed in a token")
        }
        handler.getEntity = { ctx, name in
            // Only the five predefined entities exist; anything else is refused, never looked up.
            if let predefined = xmlGetPredefinedEntity(name) { return predefined }
            let text = name.map { String(cString: $0) } ?? ""
            SAXState.from(ctx).fail(.entityForbidden, "entity '&\(text);' is not one of the predefined entities")
            return nil
        }
        handler.reference = { ctx, name in
            let text = name.map { String(cString: $0) } ?? ""
            SAXState.from(ctx).fail(.entityForbidden, "entity reference '&\(text);' is not allowed")
        }
        handler.serror = { ctx, error in
            guard let ctx, let error else { return }
            SAXState.from(ctx).libxmlError(error.pointee)
        }
    }
}

/// The parse in progress, reached from the C callbacks through `ctx`.
///
/// The mutable state is `@exclusivity(unchecked)`: it is only ever touched by
/// the one thread running this parser, from inside `xmlParseChunk` or around it,
/// never with overlapping accesses, and the dynamic exclusivity checks Swift
/// would otherwise make on every access of a class property cost more than the
/// callbacks' own work (about 200 checks per token).
final class SAXState {
    let configuration: DecoderConfiguration
    var context: xmlParserCtxtPtr?
    @exclusivity(unchecked) private var allowedRoots: Set<String> = []
    /// The same names as bytes, to recognise the root without making a String and hashing it.
    @exclusivity(unchecked) private var allowedRootNames: [(utf8: [UInt8], name: String)] = []

    @exclusivity(unchecked) private(set) var root: String?
    @exclusivity(unchecked) private(set) var fields: [TokenField] = []
    @exclusivity(unchecked) fileprivate(set) var failure: PendingFailure?
    @exclusivity(unchecked) private var recordingContainers = false
    @exclusivity(unchecked) private(set) var containerPaths: [String] = []

    /// `/`-joined path of the open elements below the root, as UTF-8.
    @exclusivity(unchecked) private var path = ByteBuffer(capacity: 256)
    @exclusivity(unchecked) private var frames = FrameStack(capacity: 32)
    @exclusivity(unchecked) private var text = ByteBuffer(capacity: 256)
    /// Scratch space for an attribute's name and path, reused.
    @exclusivity(unchecked) private var attributeName = ByteBuffer(capacity: 64)
    @exclusivity(unchecked) private var attributePath = ByteBuffer(capacity: 256)
    /// The path strings of the last document, by field position: tokens of
    /// one issuer repeat the same fields in the same order, so the n-th field's
    /// path is usually the n-th path last time and need not be made again.
    @exclusivity(unchecked) private var pathCache: [(bytes: [UInt8], string: String)] = []
    @exclusivity(unchecked) private var elementCount = 0
    /// Attributes and namespace declarations so far, for ``DecoderConfiguration/maxAttributesPerToken``.
    @exclusivity(unchecked) private var attributeCount = 0

    fileprivate struct Frame {
        /// Length of `path` before this element's name was appended.
        var parentPathLength: Int
        var hasChildren = false
        var line: Int
        var column: Int
    }

    /// An error plus the libxml2 position it was found at, turned into a
    /// byte offset once the input is at hand.
    struct PendingFailure {
        var error: TokenError
        var line: Int
        var column: Int

        func located(in bytes: UnsafeBufferPointer<UInt8>) -> TokenError {
            var error = error
            if line > 0 {
                error.location = SourceLocation(byteOffset: Self.offset(line: line, column: column, in: bytes), line: line, column: column)
            }
            return error
        }

        /// libxml2 counts columns in characters; walk UTF-8 lead bytes to find the byte.
        static func offset(line: Int, column: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
            var index = 0
            var currentLine = 1
            while currentLine < line, index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") { currentLine += 1 }
                index += 1
            }
            var remaining = max(0, column - 1)
            while remaining > 0, index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                index += 1
                while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
                remaining -= 1
            }
            return index
        }
    }

    init(configuration: DecoderConfiguration) {
        self.configuration = configuration
    }

    @inline(__always) static func from(_ ctx: UnsafeMutableRawPointer?) -> SAXState {
        Unmanaged<SAXState>.fromOpaque(ctx!).takeUnretainedValue()
    }

    /// `body(state)` without retaining the state: its parser keeps it alive for
    /// the whole parse, and the element and text callbacks run about forty times
    /// per token, where a retain/release pair (two atomic operations) each shows.
    @inline(__always) static func with(_ ctx: UnsafeMutableRawPointer?, _ body: (SAXState) -> Void) {
        Unmanaged<SAXState>.fromOpaque(ctx!)._withUnsafeGuaranteedRef(body)
    }

    func reset(allowedRoots: Set<String>, recordingContainers: Bool) {
        if allowedRoots != self.allowedRoots {
            self.allowedRoots = allowedRoots
            allowedRootNames = allowedRoots.sorted().map { (Array($0.utf8), $0) }
        }
        root = nil
        // A fresh array (the last one went out with the parsed element), sized
        // for a typical token so appending never regrows it.
        fields = []
        fields.reserveCapacity(16)
        failure = nil
        path.removeAll()
        frames.removeAll()
        text.removeAll()
        elementCount = 0
        attributeCount = 0
        self.recordingContainers = recordingContainers
        if !containerPaths.isEmpty { containerPaths = [] }
    }

    private var position: (line: Int, column: Int) {
        guard let input = context?.pointee.input else { return (0, 0) }
        return (Int(input.pointee.line), Int(input.pointee.col))
    }

    /// Records the first failure and stops the parser; the caller throws it
    /// once `xmlParseChunk` has returned (style habit 3).
    func fail(_ code: TokenError.Code, _ message: String) {
        guard failure == nil else { return }
        let (line, column) = position
        failure = PendingFailure(error: TokenError(code, stage: .parsing, message), line: line, column: column)
        if let context { xmlStopParser(context) }
    }

    func libxmlError(_ error: xmlError) {
        guard failure == nil, error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        let message = error.message.map { String(cString: $0) }?
            .trimmingTrailingNewlines() ?? "libxml2 error \(error.code)"
        let code: TokenError.Code
        switch xmlParserErrors(rawValue: UInt32(error.code)) {
        case XML_ERR_UNDECLARED_ENTITY, XML_WAR_UNDECLARED_ENTITY, XML_ERR_ENTITY_LOOP:
            code = .entityForbidden
        case XML_ERR_INVALID_ENCODING, XML_ERR_UNKNOWN_ENCODING:
            code = .invalidUTF8
        case XML_ERR_INVALID_CHAR where message.contains("UTF-8"):
            code = .invalidUTF8
        default:
            code = message.contains("UTF-8") ? .invalidUTF8 : .malformedXML
        }
        failure = PendingFailure(error: TokenError(code, stage: .parsing, message),
                                 line: Int(error.line), column: Int(error.int2))
        if let context { xmlStopParser(context) }
    }

    func startElement(localname: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?,
                      namespaceCount: Int, namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
                      attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard failure == nil, let localname else { return }
        elementCount += 1
        // Every failure below is made out of line (`fail…`): the callbacks run
        // about thirty times per token, and their error messages' string
        // interpolations made each of them set up a large frame.
        if elementCount > configuration.maxElementCount {
            return failElementCount()
        }
        if frames.count >= configuration.maxDepth {
            return failDepth()
        }
        let (line, column) = position
        let parentPathLength = path.count
        if frames.isEmpty, prefix == nil, let known = knownRoot(localname) {
            root = known
        } else if frames.isEmpty {
            guard otherRoot(localname, prefix) else { return }
        } else {
            if frames.topHasChildren == false {
                guard Self.isBlank(text.bytes) else {
                    return failMixedContent()
                }
                frames.topHasChildren = true
            }
            text.removeAll()
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            Self.appendQualifiedName(localname, prefix, to: &path)
        }
        frames.push(Frame(parentPathLength: parentPathLength, line: line, column: column))

        if namespaceCount > 0 || attributeCount > 0 {
            addAttributes(namespaceCount: namespaceCount, namespaces: namespaces,
                          attributeCount: attributeCount, attributes: attributes, line: line, column: column)
        }
    }

    /// The root when it is not one of ``allowedRootNames`` as a plain name
    /// (a prefixed name, or not a token root at all): false after failing.
    @inline(never)
    private func otherRoot(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) -> Bool {
        let name = Self.qualifiedName(localname, prefix)
        // By bytes: `Set<String>.contains` would take `authTo\u{212A}en`-like names for a root.
        guard allowedRootNames.contains(where: { $0.name.hasSameUTF8(as: name) }) else {
            fail(.unknownTokenRoot, "<\(name)> is not a token element (expected one of \(allowedRoots.sorted().joined(separator: ", ")))")
            return false
        }
        root = name
        return true
    }

    @inline(never)
    private func failElementCount() {
        fail(.elementCountLimitExceeded, "more than \(configuration.maxElementCount) elements (maxElementCount)")
    }

    @inline(never)
    private func failDepth() {
        fail(.depthLimitExceeded, "elements nested deeper than \(configuration.maxDepth) (maxDepth)")
    }

    @inline(never)
    private func failMixedContent() {
        fail(.mixedContent, "element \(path.string.nonEmpty ?? "root") mixes text and elements")
    }

    @inline(never)
    private func failFieldTooLong() {
        fail(.fieldTooLong, "field \(path.string.nonEmpty ?? "root") is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)")
    }

    /// The element's namespace declarations and attributes, as fields (rare in tokens: out of line).
    @inline(never)
    private func addAttributes(namespaceCount: Int, namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
                               attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
                               line: Int, column: Int) {
        // Both limits count namespace declarations and attributes together, as written.
        let count = namespaceCount + attributeCount
        guard count <= configuration.maxAttributesPerElement else {
            return fail(.attributeLimitExceeded, Self.attributesPerElementMessage(configuration))
        }
        self.attributeCount += count
        guard self.attributeCount <= configuration.maxAttributesPerToken else {
            return fail(.attributeLimitExceeded, "more than \(configuration.maxAttributesPerToken) attributes and namespace declarations in the document (maxAttributesPerToken)")
        }
        // Namespace declarations are attributes as written; keep them like any unknown attribute.
        if namespaceCount > 0, let namespaces {
            for index in 0..<namespaceCount {
                let declaredPrefix = namespaces[index * 2]
                let uri = namespaces[index * 2 + 1]
                attributeName.removeAll()
                Self.xmlns.withUnsafeBufferPointer { attributeName.append($0) }
                if let declaredPrefix {
                    attributeName.append(UInt8(ascii: ":"))
                    attributeName.append(UnsafeBufferPointer(start: declaredPrefix, count: strlen(declaredPrefix)))
                }
                let value = uri.map { UnsafeBufferPointer(start: $0, count: strlen($0)) } ?? UnsafeBufferPointer(start: nil, count: 0)
                guard addAttribute(value: value, line: line, column: column) else { return }
            }
        }
        if attributeCount > 0, let attributes {
            for index in 0..<attributeCount {
                let base = index * 5
                guard let name = attributes[base], let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                attributeName.removeAll()
                Self.appendQualifiedName(name, attributes[base + 1], to: &attributeName)
                let value = UnsafeBufferPointer(start: start, count: start.distance(to: end))
                guard addAttribute(value: value, line: line, column: column) else { return }
            }
        }
    }

    private static let xmlns = Array("xmlns".utf8)

    static func attributesPerElementMessage(_ configuration: DecoderConfiguration) -> String {
        "an element has more than \(configuration.maxAttributesPerElement) attributes and namespace declarations (maxAttributesPerElement)"
    }

    /// The per-element limit's error for the start tag at byte `offset`, found
    /// before parsing; located as libxml2 locates its errors (columns in characters).
    static func attributesPerElementError(_ configuration: DecoderConfiguration, at offset: Int,
                                          in bytes: UnsafeBufferPointer<UInt8>) -> TokenError {
        var line = 1
        var column = 1
        for index in 0..<min(offset, bytes.count) {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[index] & 0xC0 != 0x80 {
                column += 1
            }
        }
        return TokenError(.attributeLimitExceeded, stage: .parsing, attributesPerElementMessage(configuration),
                          at: SourceLocation(byteOffset: offset, line: line, column: column))
    }

    /// Adds the attribute named by `attributeName` at the current path.
    private func addAttribute(value: UnsafeBufferPointer<UInt8>, line: Int, column: Int) -> Bool {
        let decoded = Self.attributeText(value)
        guard decoded.utf8.count <= configuration.maxFieldBytes else {
            fail(.fieldTooLong, "attribute \(attributeName.string) is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)")
            return false
        }
        attributePath.removeAll()
        attributePath.append(path.bytes)
        if !attributePath.isEmpty { attributePath.append(UInt8(ascii: "/")) }
        attributePath.append(UInt8(ascii: "@"))
        attributePath.append(attributeName.bytes)
        fields.append(TokenField(path: fieldPath(attributePath.bytes),
                                 value: decoded, line: line, column: column))
        return true
    }

    /// An attribute value (or namespace URI) as the document means it. With
    /// entity substitution off, libxml2 hands `&amp;` and `&#38;` in an
    /// attribute value over as the five characters `&#38;`, for a tree builder
    /// to decode again; no other `&` can reach a value, so each `&#38;` here is
    /// one `&` (found by FuzzDecode: Fuzz/FailCases/FuzzDecode/attribute-amp-entity.xml).
    static func attributeText(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard value.contains(UInt8(ascii: "&")) else { return String(decoding: value, as: UTF8.self) }
        let escaped = Array("&#38;".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            if value[index] == UInt8(ascii: "&"), index + escaped.count <= value.count,
               value[index..<(index + escaped.count)].elementsEqual(escaped) {
                out.append(UInt8(ascii: "&"))
                index += escaped.count
            } else {
                out.append(value[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func endElement() {
        guard failure == nil, let frame = frames.pop() else { return }
        if !frame.hasChildren && !frames.isEmpty {
            fields.append(TokenField(path: pathString(),
                                     value: text.string,
                                     line: frame.line, column: frame.column))
        } else if !Self.isBlank(text.bytes) {
            return failMixedContent()
        } else if recordingContainers, !frames.isEmpty {
            containerPaths.append(path.string)
        }
        text.removeAll()
        // Drop this element's name (and its separator) from the path.
        path.truncate(to: frame.parentPathLength)
    }

    /// The allowed root whose name is `localname`, if one is.
    private func knownRoot(_ localname: UnsafePointer<xmlChar>) -> String? {
        let length = strlen(localname)
        for entry in allowedRootNames where entry.utf8.count == length {
            if entry.utf8.withUnsafeBufferPointer({ memcmp($0.baseAddress!, localname, length) == 0 }) { return entry.name }
        }
        return nil
    }

    /// `path` as a String, from ``pathCache`` when the same field stood at the same position before.
    private func pathString() -> String {
        fieldPath(path.bytes)
    }

    /// `bytes` (the path of the next field) as a String, from ``pathCache``
    /// when the same path stood at the same position before.
    private func fieldPath(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let position = fields.count
        if position < pathCache.count, pathCache[position].bytes.withUnsafeBufferPointer({ cached in
            cached.count == bytes.count && (bytes.isEmpty || memcmp(cached.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }) {
            return pathCache[position].string
        }
        let string = String(decoding: bytes, as: UTF8.self)
        if position < pathCache.count {
            pathCache[position] = (Array(bytes), string)
        } else if position == pathCache.count, position < 64 {
            pathCache.append((Array(bytes), string))
        }
        return string
    }

    func text(_ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard failure == nil, let bytes, length > 0, !frames.isEmpty else { return }
        let chunk = UnsafeBufferPointer(start: bytes, count: length)
        if frames.topHasChildren {
            // Between child elements only white space (pretty printing) is allowed.
            guard Self.isBlank(chunk) else {
                return failMixedContent()
            }
            return
        }
        guard text.count + length <= configuration.maxFieldBytes else {
            return failFieldTooLong()
        }
        text.append(chunk)
    }

    private static func isBlank(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0.isASCIIWhitespace }
    }

    private static func qualifiedName(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) -> String {
        var bytes = ByteBuffer(capacity: 64)
        appendQualifiedName(localname, prefix, to: &bytes)
        return bytes.string
    }

    private static func appendQualifiedName(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, to bytes: inout ByteBuffer) {
        if let prefix {
            bytes.append(UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            bytes.append(UInt8(ascii: ":"))
        }
        bytes.append(UnsafeBufferPointer(start: localname, count: strlen(localname)))
    }
}

private func strlen(_ pointer: UnsafePointer<xmlChar>) -> Int {
    Int(xmlStrlen(pointer))
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }

    func trimmingTrailingNewlines() -> String {
        var result = self
        while let last = result.last, last == "\n" || last == "\r" || last == " " { result.removeLast() }
        return result
    }
}

/// A growable run of bytes that owns its memory: the parser's path and text
/// scratch space. Appending is a bounds check and a copy, and emptying or
/// shortening it only moves its end (a `[UInt8]` would check uniqueness and
/// go through generic range replacement on each of the ~40 uses per token).
struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Valid until the next append.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        if count + buffer.count > capacity { grow(count + buffer.count) }
        (base + count).update(from: source, count: buffer.count)
        count += buffer.count
    }

    mutating func removeAll() {
        count = 0
    }

    /// Keeps the first `length` bytes.
    mutating func truncate(to length: Int) {
        count = min(count, length)
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}

/// The frames of the open elements: a stack that owns its memory. An array
/// checked its uniqueness on every push, pop and update of the top frame
/// (about thirty times per token).
private struct FrameStack: ~Copyable {
    private var base: UnsafeMutablePointer<SAXState.Frame>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(4, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()  // Frame is trivial: nothing to deinitialize
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    mutating func push(_ frame: SAXState.Frame) {
        if count == capacity { grow() }
        (base + count).initialize(to: frame)
        count += 1
    }

    @inline(never)
    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBase = UnsafeMutablePointer<SAXState.Frame>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func pop() -> SAXState.Frame? {
        guard count > 0 else { return nil }
        count -= 1
        return (base + count).move()
    }

    /// Whether the innermost open element has a child element; the stack must not be empty.
    var topHasChildren: Bool {
        @inline(__always) get {
            precondition(count > 0)
            return base[count - 1].hasChildren
        }
        @inline(__always) set {
            precondition(count > 0)
            base[count - 1].hasChildren = newValue
        }
    }

    mutating func removeAll() {
        count = 0
    }
}
