/// The hardened XML parser of tokens and Media RSS documents, reused across them.
///
/// Checks what must be refused before libxml2 sees a byte (size, a crowded
/// start tag), makes line ends what XML 1.0 says they are, then has
/// ``LibXML2Driver`` parse the document into ``FieldReader``'s fields. Not
/// thread-safe: use one per thread (``TokenDecoder`` owns one; other work
/// borrows one from ``TokenDecoderPool``).
///
/// What it refuses (docs/DESIGN.md#parsing-rules): DOCTYPE and entity declarations, entity references
/// other than the five predefined ones (character references are fine),
/// comments, processing instructions, mixed content, and anything beyond the
/// limits of ``DecoderConfiguration``. It never loads anything.
final class XMLPushParser {
    private let driver: LibXML2Driver
    let configuration: DecoderConfiguration

    init(configuration: DecoderConfiguration) {
        self.configuration = configuration
        driver = LibXML2Driver(configuration: configuration)
    }

    /// The fields the last parse read, up to where it stopped (for an error's
    /// ``TokenError/fieldsBeforeError``).
    var fieldsReadSoFar: [TokenField] { driver.withReader { $0.fields } }

    /// Parses one complete XML document (a token element, or a Media RSS document)
    /// whose root must be one of `allowedRoots`.
    ///
    /// `chunkSize` splits the bytes into several `xmlParseChunk` calls; the
    /// result must not depend on it (tests feed byte by byte). With
    /// `recordingContainers`, the paths of elements that have child elements
    /// are kept too (``ParsedElement/containerPaths``), for readers that must
    /// count elements, not only fields (a Media RSS document's items).
    func parse(
        _ bytes: Span<UInt8>,
        allowedRoots: Set<String>,
        recordingContainers: Bool = false,
        chunkSize: Int = .max
    ) throws(TokenError) -> ParsedElement {
        if bytes.count > configuration.maxTokenBytes {
            throw TokenError(
                .tokenTooLarge,
                stage: .parsing,
                "\(bytes.count) bytes of XML; the limit is \(configuration.maxTokenBytes) (maxTokenBytes)"
            )
        }
        // XML 1.0 §2.11: CR LF and a lone CR are read as LF before parsing.
        // libxml2 does that everywhere except in CDATA sections fed through its
        // push parser, which it hands over raw; so a field's value would depend
        // on whether the issuer wrapped it in CDATA (found by FuzzDecode:
        // Fuzz/FailCases/FuzzDecode/cdata-crlf-line-end.xml). The caller's
        // bytes, which are the signed bytes, stay as they are.
        if ByteSearch.firstIndex(of: 0x0D, in: bytes, from: 0) != nil {
            let normalized = Self.normalizingLineEnds(bytes)
            return try parse(normalized.span, allowedRoots: allowedRoots, recordingContainers: recordingContainers, chunkSize: chunkSize)
        }
        let attributeLimit = configuration.maxAttributesPerElement
        if Self.mayHoldCrowdedStartTag(bytes, limit: attributeLimit),
            let start = CrowdedStartTag.find(in: bytes, limit: attributeLimit)
        {
            throw FieldReader.attributesPerElementError(configuration, at: start, in: bytes)
        }
        driver.withReader { $0.reset(allowedRoots: allowedRoots, recordingContainers: recordingContainers) }
        driver.parse(bytes, chunkSize: chunkSize)
        return try driver.withReader { (reader) throws(TokenError) in try reader.result(in: bytes) }
    }

    /// Whether some stretch of `bytes` from one `<` to the next holds more `=`
    /// than one start tag may have attributes: only then can a start tag be too
    /// crowded for libxml2 (see ``CrowdedStartTag``). A token has a handful of
    /// `=` in all, so this is usually a few byte searches over the whole token.
    static func mayHoldCrowdedStartTag(_ bytes: Span<UInt8>, limit: Int) -> Bool {
        guard equalSigns(in: bytes, from: 0, to: bytes.count, moreThan: limit) else { return false }
        // Many in all (a token with hundreds of attributes, within the limits): stretch by stretch.
        var start = 0
        while start < bytes.count {
            let end = ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: bytes, from: start + 1) ?? bytes.count
            if equalSigns(in: bytes, from: start, to: end, moreThan: limit) { return true }
            start = end
        }
        return false
    }

    private static func equalSigns(in bytes: Span<UInt8>, from start: Int, to end: Int, moreThan limit: Int) -> Bool {
        let stretch = bytes.extracting(start..<end)
        var found = 0
        var index = 0
        while found <= limit, let next = ByteSearch.firstIndex(of: UInt8(ascii: "="), in: stretch, from: index) {
            found += 1
            index = next + 1
        }
        return found > limit
    }

    /// `bytes` with every CR LF and lone CR turned into LF (XML 1.0 §2.11).
    static func normalizingLineEnds(_ bytes: Span<UInt8>) -> [UInt8] {
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
}
