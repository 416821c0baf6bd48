/// Decodes one token: transport → framing → parsing → model.
///
/// Owns a libxml2 parser context that it reuses for every token, so it is a
/// class and not `Sendable`: create one per thread or task and keep it.
/// Creating one costs a few microseconds; decoding with it allocates only the
/// token's own strings.
public final class TokenDecoder {
    /// The limits and leniences this decoder applies.
    public let configuration: DecoderConfiguration
    private let transport: TransportDecoder
    let parser: XMLPushParser
    /// The Media RSS `resourceID` of the last token that had one, with its
    /// (lazily parsed) reading; it is immutable and `Sendable`, so tokens that
    /// share it may be read from any thread.
    private var lastMediaRSS: LazyMediaRSS?

    /// A decoder with its own libxml2 parser context.
    public init(configuration: DecoderConfiguration = .default) {
        self.configuration = configuration
        transport = TransportDecoder(configuration: configuration)
        parser = XMLPushParser(configuration: configuration)
    }

    /// Decodes one token in any transport form except a REST JSON document
    /// (which can hold many tokens: give it to ``TokenStreamDecoder``).
    ///
    /// Inlinable so that a caller's collection type is specialised where it is
    /// known (an `[UInt8]` reaches its bytes directly, not through the
    /// `Collection` witness table).
    @inlinable
    public func decode(_ record: some Collection<UInt8>, envelope: RESTEnvelope? = nil) throws(TokenError) -> DecodedToken {
        // An array or array slice is read in place; other collections are copied once.
        if let array = record as? [UInt8] { return try decode(array.span, envelope: envelope) }
        if let slice = record as? ArraySlice<UInt8> { return try decode(slice.span, envelope: envelope) }
        let copy = Array(record)
        return try decode(copy.span, envelope: envelope)
    }

    /// Decodes one token given as text (its UTF-8 bytes).
    public func decode(_ text: String, envelope: RESTEnvelope? = nil) throws(TokenError) -> DecodedToken {
        try decode(Array(text.utf8), envelope: envelope)
    }

    /// The XML a record holds once its transport form is undone (Base64,
    /// percent-encoding, a REST envelope's string…), before framing: what the
    /// location of a framing, parsing or model error points into, for a tool
    /// that shows the error in place (the web debugger). Throws the record's
    /// transport error, if it has one.
    public func decodedXML(of record: [UInt8], envelope: RESTEnvelope? = nil) throws(TokenError) -> [UInt8] {
        try transport.decode(record.span, envelope: envelope?.version).xml
    }

    @usableFromInline
    func decode(_ record: Span<UInt8>, envelope: RESTEnvelope?) throws(TokenError) -> DecodedToken {
        let payload = try transport.decode(record, envelope: envelope?.version)
        let xml = payload.xml
        let frame = try TokenFrame(xml: xml)
        let element = frame.tokenElement
        let parsed: ParsedElement
        do {
            parsed = try parser.parse(xml.span.extracting(element), allowedRoots: EntitlementToken.roots)
        } catch {
            var error = Self.relocated(error, elementStart: element.lowerBound, in: xml)
            error.fieldsBeforeError = parser.fieldsReadSoFar
            throw error
        }
        let token: EntitlementToken
        do {
            token = try EntitlementToken(root: parsed.root, fields: parsed.fields)
        } catch {
            var error = Self.relocated(error, elementStart: element.lowerBound, in: xml)
            error.fieldsBeforeError = parsed.fields
            throw error
        }
        // A Media RSS resourceID is parsed when first asked for, not here.
        var mediaRSS: LazyMediaRSS? = nil
        if let resource = token.resourceID, MediaRSSResource.looksLikeRSS(resource) {
            // Consecutive tokens usually name the same resource (one channel,
            // one show): they share one reading of it, parsed at most once.
            // By bytes: `==` would hand a decomposed `Café` the reading of a composed one.
            if let last = lastMediaRSS, last.text.hasSameUTF8(as: resource) {
                mediaRSS = last
            } else {
                mediaRSS = LazyMediaRSS(text: resource, configuration: configuration)
                lastMediaRSS = mediaRSS
            }
        }
        return DecodedToken(
            token: token,
            fields: parsed.fields,
            xml: xml,
            frame: frame,
            transport: payload.form,
            envelope: envelope,
            mediaRSS: mediaRSS,
            warnings: payload.warnings
        )
    }

    /// Moves a parsing or model error from the token element's coordinates to
    /// the decoded XML's, so offsets and line:column point into what the user has.
    static func relocated(_ error: TokenError, elementStart: Int, in xml: [UInt8]) -> TokenError {
        var error = error
        guard let location = error.location else { return error }
        let inner =
            location.line.map {
                SourcePositions.byteOffset(line: $0, column: location.column ?? 1, in: xml.span.extracting(elementStart...))
            } ?? location.byteOffset
        error.location = SourceLocation(offset: elementStart + inner, in: xml)
        return error
    }
}
