internal import CLibXML2

/// libxml2's push (SAX2) parser, hardened for hostile documents and reused
/// across them: the only code that touches libxml2 (docs/DESIGN.md#unsafe-code-faces-c).
///
/// One instance owns one `xmlParserCtxt` (docs/DESIGN.md#the-librarys-habits: one owner per C
/// object) and resets it per document with `xmlCtxtResetPush`, so creating the
/// context and its dictionary is paid once, not per token. Not thread-safe.
///
/// It turns libxml2's callbacks into ``FieldReader`` events, every name and
/// text handed over as a `Span` over libxml2's memory for the length of the
/// call, and refuses in libxml2's terms what the field rules never see (docs/DESIGN.md#parsing-rules):
/// DOCTYPE and entity declarations, entity references other than the five
/// predefined ones (character references are fine), comments, processing
/// instructions, and libxml2's own errors. It never loads anything
/// (`XML_PARSE_NONET`, no DTD loading, no entity substitution).
final class LibXML2Driver {
    /// What the callbacks reach through libxml2's `ctx`: plain memory, so a
    /// callback costs no reference counting and no exclusivity check.
    private struct CallbackState: ~Copyable {
        var reader: FieldReader
        var context: xmlParserCtxtPtr?

        /// Where libxml2 is now (1-based line, column in characters).
        var position: (line: Int, column: Int) {
            guard let input = context?.pointee.input else { return (0, 0) }
            return (Int(input.pointee.line), Int(input.pointee.col))
        }

        mutating func fail(_ code: TokenError.Code, _ message: String) {
            let (line, column) = position
            reader.fail(code, message, line: line, column: column)
        }
    }

    private let context: xmlParserCtxtPtr
    private let state: UnsafeMutablePointer<CallbackState>

    init(configuration: DecoderConfiguration) {
        state = .allocate(capacity: 1)
        state.initialize(to: CallbackState(reader: FieldReader(configuration: configuration), context: nil))
        var handler = xmlSAXHandler()
        Self.install(&handler)
        // libxml2 copies the handler; `state` is passed to every callback as `ctx`.
        context = xmlCreatePushParserCtxt(&handler, UnsafeMutableRawPointer(state), nil, 0, nil)!
        state.pointee.context = context
    }

    deinit {
        xmlFreeParserCtxt(context)
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The field rules' state: read and reset between parses.
    func withReader<Result, Failure: Error>(_ body: (inout FieldReader) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(&state.pointee.reader)
    }

    /// Feeds `bytes`, one complete document, to libxml2 in chunks of
    /// `chunkSize` bytes (the result must not depend on it), stopping at the
    /// reader's first failure. A document that libxml2 finds not well-formed
    /// without having said why fails as `malformedXML`.
    func parse(_ bytes: Span<UInt8>, chunkSize: Int) {
        // No encoding name: the bytes are already validated UTF-8, and naming
        // "UTF-8" made libxml2 copy every chunk through a UTF-8→UTF-8 converter.
        xmlCtxtResetPush(context, nil, 0, nil, nil)
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_IGNORE_ENC.rawValue))
        context.pointee.replaceEntities = 0
        context.pointee.loadsubset = 0
        context.pointee.validate = 0

        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            let step = max(1, chunkSize)
            repeat {
                let length = min(step, buffer.count - offset)
                let last = offset + length == buffer.count
                let chunk = buffer.baseAddress.map { UnsafeRawPointer($0 + offset).assumingMemoryBound(to: CChar.self) }
                _ = xmlParseChunk(context, chunk, Int32(length), last ? 1 : 0)
                offset += length
                if state.pointee.reader.hasFailed { break }
            } while offset < buffer.count
        }
        if !state.pointee.reader.hasFailed, context.pointee.wellFormed == 0 {
            state.pointee.fail(.malformedXML, "the token element is not well-formed XML")
        }
    }

    // MARK: - Callbacks

    private static func state(_ ctx: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CallbackState> {
        ctx!.assumingMemoryBound(to: CallbackState.self)
    }

    /// Stops libxml2 once the reader has failed: the failure is thrown once
    /// `xmlParseChunk` has returned (docs/DESIGN.md#the-librarys-habits).
    private static func stopIfFailed(_ state: UnsafeMutablePointer<CallbackState>) {
        if state.pointee.reader.hasFailed, let context = state.pointee.context { xmlStopParser(context) }
    }

    private static func fail(_ ctx: UnsafeMutableRawPointer?, _ code: TokenError.Code, _ message: String) {
        let state = state(ctx)
        state.pointee.fail(code, message)
        stopIfFailed(state)
    }

    /// Fills in the SAX2 callbacks. Closures here capture nothing: they reach
    /// the Swift state through the `ctx` pointer (docs/DESIGN.md#the-librarys-habits).
    private static func install(_ handler: inout xmlSAXHandler) {
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { ctx, localname, prefix, _, namespaceCount, namespaces, attributeCount, _, attributes in
            guard let localname else { return }
            let callback = LibXML2Driver.state(ctx)
            LibXML2Driver.startElement(
                callback,
                localname: localname,
                prefix: prefix,
                namespaceCount: Int(namespaceCount),
                namespaces: namespaces,
                attributeCount: Int(attributeCount),
                attributes: attributes
            )
            LibXML2Driver.stopIfFailed(callback)
        }
        handler.endElementNs = { ctx, _, _, _ in
            let callback = LibXML2Driver.state(ctx)
            let (line, column) = callback.pointee.position
            callback.pointee.reader.endElement(line: line, column: column)
            LibXML2Driver.stopIfFailed(callback)
        }
        handler.characters = { ctx, bytes, length in
            LibXML2Driver.text(LibXML2Driver.state(ctx), bytes, Int(length))
        }
        handler.ignorableWhitespace = handler.characters
        handler.cdataBlock = { ctx, bytes, length in
            LibXML2Driver.text(LibXML2Driver.state(ctx), bytes, Int(length))
        }
        handler.comment = { ctx, _ in
            LibXML2Driver.fail(ctx, .commentForbidden, "comments are not allowed in a token")
        }
        handler.processingInstruction = { ctx, _, _ in
            LibXML2Driver.fail(ctx, .processingInstructionForbidden, "processing instructions are not allowed in a token")
        }
        handler.internalSubset = { ctx, _, _, _ in
            LibXML2Driver.fail(ctx, .doctypeForbidden, "DOCTYPE is not allowed in a token")
        }
        handler.externalSubset = { ctx, _, _, _ in
            LibXML2Driver.fail(ctx, .doctypeForbidden, "DOCTYPE is not allowed in a token")
        }
        handler.entityDecl = { ctx, _, _, _, _, _ in
            LibXML2Driver.fail(ctx, .entityForbidden, "entity declarations are not allowed in a token")
        }
        handler.getEntity = { ctx, name in
            // Only the five predefined entities exist; anything else is refused, never looked up.
            if let predefined = xmlGetPredefinedEntity(name) { return predefined }
            let text = name.map { String(cString: $0) } ?? ""
            LibXML2Driver.fail(ctx, .entityForbidden, "entity '&\(text);' is not one of the predefined entities")
            return nil
        }
        handler.reference = { ctx, name in
            let text = name.map { String(cString: $0) } ?? ""
            LibXML2Driver.fail(ctx, .entityForbidden, "entity reference '&\(text);' is not allowed")
        }
        handler.serror = { ctx, error in
            guard let ctx, let error else { return }
            LibXML2Driver.libxmlError(LibXML2Driver.state(ctx), error.pointee)
        }
    }

    private static func startElement(
        _ state: UnsafeMutablePointer<CallbackState>,
        localname: UnsafePointer<xmlChar>,
        prefix: UnsafePointer<xmlChar>?,
        namespaceCount: Int,
        namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
        attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        let (line, column) = state.pointee.position
        let name = cString(localname)
        let prefixBytes = cString(prefix)
        guard
            state.pointee.reader.startElement(
                localName: name.span,
                prefix: prefixBytes.span,
                attributeCount: namespaceCount + attributeCount,
                line: line,
                column: column
            )
        else { return }
        // The element's namespace declarations: (prefix, URI) pairs.
        if namespaceCount > 0, let namespaces {
            for index in 0..<namespaceCount {
                let declaredPrefix = cString(namespaces[index * 2])
                let uri = cString(namespaces[index * 2 + 1])
                guard state.pointee.reader.namespaceDeclaration(prefix: declaredPrefix.span, uri: uri.span) else { return }
            }
        }
        // Its attributes: (localname, prefix, URI, value start, value end) quintuples.
        if attributeCount > 0, let attributes {
            for index in 0..<attributeCount {
                let base = index * 5
                guard let name = attributes[base], let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                let value = UnsafeBufferPointer(start: start, count: start.distance(to: end))
                guard
                    state.pointee.reader.attribute(
                        localName: cString(name).span,
                        prefix: cString(attributes[base + 1]).span,
                        value: value.span
                    )
                else { return }
            }
        }
    }

    private static func text(_ state: UnsafeMutablePointer<CallbackState>, _ bytes: UnsafePointer<xmlChar>?, _ length: Int) {
        guard let bytes, length > 0 else { return }
        let (line, column) = state.pointee.position
        state.pointee.reader.text(UnsafeBufferPointer(start: bytes, count: length).span, line: line, column: column)
        stopIfFailed(state)
    }

    private static func libxmlError(_ state: UnsafeMutablePointer<CallbackState>, _ error: xmlError) {
        guard !state.pointee.reader.hasFailed, error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        let message =
            error.message.map { String(cString: $0) }?
            .trimmingTrailingNewlines() ?? "libxml2 error \(error.code)"
        let code: TokenError.Code
        switch xmlParserErrors(rawValue: UInt32(error.code)) {
        case XML_ERR_UNDECLARED_ENTITY, XML_WAR_UNDECLARED_ENTITY, XML_ERR_ENTITY_LOOP:
            code = .entityForbidden
        case XML_ERR_INVALID_CHAR where message.contains("UTF-8"):
            code = .invalidUTF8
        case XML_ERR_INVALID_ENCODING, XML_ERR_UNKNOWN_ENCODING:
            code = .invalidUTF8
        default:
            code = message.contains("UTF-8") ? .invalidUTF8 : .malformedXML
        }
        state.pointee.reader.fail(code, message, line: Int(error.line), column: Int(error.int2))
        stopIfFailed(state)
    }

    /// A NUL-terminated libxml2 string's bytes (none for nil).
    private static func cString(_ pointer: UnsafePointer<xmlChar>?) -> UnsafeBufferPointer<UInt8> {
        guard let pointer else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: pointer, count: Int(xmlStrlen(pointer)))
    }
}
