internal import CLibXML2

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
    /// result must not depend on it (tests feed byte by byte).
    func parse(_ bytes: UnsafeBufferPointer<UInt8>, allowedRoots: Set<String>, chunkSize: Int = .max) throws(TokenError) -> ParsedElement {
        if bytes.count > state.configuration.maxTokenBytes {
            throw TokenError(.tokenTooLarge, stage: .parsing,
                             "\(bytes.count) bytes of XML; the limit is \(state.configuration.maxTokenBytes) (maxTokenBytes)")
        }
        state.reset(allowedRoots: allowedRoots)
        xmlCtxtResetPush(context, nil, 0, nil, "UTF-8")
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
        return ParsedElement(root: root, fields: state.fields)
    }

    /// Fills in the SAX2 callbacks. Closures here capture nothing: they reach
    /// the Swift state through the `ctx` pointer (style habit 3).
    private static func install(_ handler: inout xmlSAXHandler) {
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { ctx, localname, prefix, _, namespaceCount, namespaces, attributeCount, _, attributes in
            SAXState.from(ctx).startElement(localname: localname, prefix: prefix,
                                            namespaceCount: Int(namespaceCount), namespaces: namespaces,
                                            attributeCount: Int(attributeCount), attributes: attributes)
        }
        handler.endElementNs = { ctx, _, _, _ in
            SAXState.from(ctx).endElement()
        }
        handler.characters = { ctx, bytes, length in
            SAXState.from(ctx).text(bytes, Int(length))
        }
        handler.ignorableWhitespace = handler.characters
        handler.cdataBlock = { ctx, bytes, length in
            SAXState.from(ctx).text(bytes, Int(length))
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
final class SAXState {
    let configuration: DecoderConfiguration
    var context: xmlParserCtxtPtr?
    private var allowedRoots: Set<String> = []

    private(set) var root: String?
    private(set) var fields: [TokenField] = []
    fileprivate(set) var failure: PendingFailure?

    /// `/`-joined path of the open elements below the root, as UTF-8.
    private var path: [UInt8] = []
    private var frames: [Frame] = []
    private var text: [UInt8] = []
    private var elementCount = 0

    private struct Frame {
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
        path.reserveCapacity(256)
        text.reserveCapacity(256)
        frames.reserveCapacity(configuration.maxDepth + 1)
    }

    @inline(__always) static func from(_ ctx: UnsafeMutableRawPointer?) -> SAXState {
        Unmanaged<SAXState>.fromOpaque(ctx!).takeUnretainedValue()
    }

    func reset(allowedRoots: Set<String>) {
        self.allowedRoots = allowedRoots
        root = nil
        fields = []
        failure = nil
        path.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
        elementCount = 0
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
        if elementCount > configuration.maxElementCount {
            return fail(.elementCountLimitExceeded, "more than \(configuration.maxElementCount) elements (maxElementCount)")
        }
        if frames.count >= configuration.maxDepth {
            return fail(.depthLimitExceeded, "elements nested deeper than \(configuration.maxDepth) (maxDepth)")
        }
        let (line, column) = position
        let parentPathLength = path.count
        if frames.isEmpty {
            let name = Self.qualifiedName(localname, prefix)
            guard allowedRoots.contains(name) else {
                return fail(.unknownTokenRoot, "<\(name)> is not a token element (expected one of \(allowedRoots.sorted().joined(separator: ", ")))")
            }
            root = name
        } else {
            if frames[frames.count - 1].hasChildren == false {
                guard Self.isBlank(text) else {
                    return fail(.mixedContent, "element \(String(decoding: path, as: UTF8.self).nonEmpty ?? "root") mixes text and elements")
                }
                frames[frames.count - 1].hasChildren = true
            }
            text.removeAll(keepingCapacity: true)
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            Self.appendQualifiedName(localname, prefix, to: &path)
        }
        frames.append(Frame(parentPathLength: parentPathLength, line: line, column: column))

        // Namespace declarations are attributes as written; keep them like any unknown attribute.
        if namespaceCount > 0, let namespaces {
            for index in 0..<namespaceCount {
                let declaredPrefix = namespaces[index * 2]
                let uri = namespaces[index * 2 + 1]
                var name: [UInt8] = Array("xmlns".utf8)
                if let declaredPrefix {
                    name.append(UInt8(ascii: ":"))
                    name.append(contentsOf: UnsafeBufferPointer(start: declaredPrefix, count: strlen(declaredPrefix)))
                }
                let value = uri.map { UnsafeBufferPointer(start: $0, count: strlen($0)) } ?? UnsafeBufferPointer(start: nil, count: 0)
                guard addAttribute(name: name, value: value, line: line, column: column) else { return }
            }
        }
        if attributeCount > 0, let attributes {
            for index in 0..<attributeCount {
                let base = index * 5
                guard let name = attributes[base], let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                var qualified: [UInt8] = []
                Self.appendQualifiedName(name, attributes[base + 1], to: &qualified)
                let value = UnsafeBufferPointer(start: start, count: start.distance(to: end))
                guard addAttribute(name: qualified, value: value, line: line, column: column) else { return }
            }
        }
    }

    private func addAttribute(name: [UInt8], value: UnsafeBufferPointer<UInt8>, line: Int, column: Int) -> Bool {
        guard value.count <= configuration.maxFieldBytes else {
            fail(.fieldTooLong, "attribute \(String(decoding: name, as: UTF8.self)) is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)")
            return false
        }
        var attributePath = path
        if !attributePath.isEmpty { attributePath.append(UInt8(ascii: "/")) }
        attributePath.append(UInt8(ascii: "@"))
        attributePath.append(contentsOf: name)
        fields.append(TokenField(path: String(decoding: attributePath, as: UTF8.self),
                                 value: String(decoding: value, as: UTF8.self), line: line, column: column))
        return true
    }

    func endElement() {
        guard failure == nil, let frame = frames.popLast() else { return }
        if !frame.hasChildren && !frames.isEmpty {
            fields.append(TokenField(path: String(decoding: path, as: UTF8.self),
                                     value: String(decoding: text, as: UTF8.self),
                                     line: frame.line, column: frame.column))
        } else if !Self.isBlank(text) {
            return fail(.mixedContent, "element \(String(decoding: path, as: UTF8.self).nonEmpty ?? "root") mixes text and elements")
        }
        text.removeAll(keepingCapacity: true)
        // Drop this element's name (and its separator) from the path.
        path.removeSubrange(frame.parentPathLength...)
    }

    func text(_ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard failure == nil, let bytes, length > 0, !frames.isEmpty else { return }
        let chunk = UnsafeBufferPointer(start: bytes, count: length)
        if frames[frames.count - 1].hasChildren {
            // Between child elements only white space (pretty printing) is allowed.
            guard Self.isBlank(chunk) else {
                return fail(.mixedContent, "element \(String(decoding: path, as: UTF8.self).nonEmpty ?? "root") mixes text and elements")
            }
            return
        }
        guard text.count + length <= configuration.maxFieldBytes else {
            return fail(.fieldTooLong, "field \(String(decoding: path, as: UTF8.self).nonEmpty ?? "root") is longer than \(configuration.maxFieldBytes) bytes (maxFieldBytes)")
        }
        text.append(contentsOf: chunk)
    }

    private static func isBlank(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0.isASCIIWhitespace }
    }

    private static func qualifiedName(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?) -> String {
        var bytes: [UInt8] = []
        appendQualifiedName(localname, prefix, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendQualifiedName(_ localname: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, to bytes: inout [UInt8]) {
        if let prefix {
            bytes.append(contentsOf: UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            bytes.append(UInt8(ascii: ":"))
        }
        bytes.append(contentsOf: UnsafeBufferPointer(start: localname, count: strlen(localname)))
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
