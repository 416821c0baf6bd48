import EntitlementTokens

/// A strict, bounded pull scanner of the XML an MPD is written in: it says
/// where each element, attribute value and run of text lies in the input,
/// so the DASH rewriter splices bytes and keeps every other byte as it was
/// (docs/DESIGN.md#the-mpd-reader).
///
/// Not a general XML parser, on purpose:
///
/// - UTF-8 only (an XML declaration may say so, and may say nothing else), with
///   the characters XML 1.0 allows.
/// - **No DTD**: `<!DOCTYPE` and `<!ENTITY` are refused wherever they stand, so no
///   entity is ever declared, expanded or fetched (billion laughs, XXE). Only the
///   five predefined entities and numeric character references are decoded.
/// - Comments and processing instructions are kept as bytes and reported; CDATA
///   sections too, and the reader refuses one where it would have to rewrite
///   the text (inside `BaseURL` or `Location`), where two readings could differ.
/// - Well-formed or refused: one root, matching end tags, no duplicate
///   attribute (by name or by namespace and local name), declared prefixes only.
/// - Bounded by ``MPDScanLimits`` and linear in the input: every byte is looked
///   at a fixed number of times, and namespace lookups are a dictionary's.
///
/// `next()` hands out one ``MPDToken`` at a time; after `.startElement` the
/// element's name is ``element`` and its attributes ``attributes``; after
/// `.endElement`, ``element`` is the name of the element that closed.
struct MPDScanner {
    /// DASH's MPD namespace: the elements the rewriter reads are in it.
    static let dashNamespace = "urn:mpeg:dash:schema:mpd:2011"
    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"
    static let xmlnsNamespace = "http://www.w3.org/2000/xmlns/"

    let input: [UInt8]
    let limits: MPDScanLimits
    private var position = 0
    /// The element just started or just ended.
    private(set) var element = MPDName(namespace: nil, localName: "", range: 0..<0)
    /// The attributes of the element just started, in document order.
    private(set) var attributes: [MPDAttribute] = []
    /// The open elements' names, the root first.
    private(set) var openElements: [MPDName] = []
    /// Each prefix's bindings, innermost last; `""` is the default namespace.
    private var bindings: [String: [String?]] = ["xml": [MPDScanner.xmlNamespace]]
    /// For each open element, the prefixes it declared (to unbind at its end).
    private var declared: [[String]] = []
    private var closesItself = false
    private var rootSeen = false
    private var seenNames: Set<String> = []
    private var seenExpandedNames: Set<String> = []

    /// Reads the prologue (a byte-order mark, the XML declaration) and checks
    /// that every byte is UTF-8 of a character XML 1.0 allows.
    init(_ input: [UInt8], limits: MPDScanLimits = .standard) throws(ManifestError) {
        self.input = input
        self.limits = limits
        if let bad = UTF8Validation.firstInvalidOffset(in: input.span) {
            throw ManifestError("bytes that are not UTF-8 (an MPD is read as UTF-8 only)", at: bad)
        }
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                throw ManifestError("a control character, which XML does not allow", at: index)
            }
            // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters.
            if byte == 0xEF, index + 2 < input.count, input[index + 1] == 0xBF, input[index + 2] >= 0xBE {
                throw ManifestError("U+FFFE or U+FFFF, which XML does not allow", at: index)
            }
            index += 1
        }
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        try readDeclaration()
    }

    // MARK: - Tokens

    /// The next token, or nil at the end of a well-formed document.
    mutating func next() throws(ManifestError) -> MPDToken? {
        if closesItself {
            closesItself = false
            return try closeElement(at: position)
        }
        guard position < input.count else {
            if let open = openElements.last {
                throw ManifestError("the document ends inside <\(open.localName)>: an end tag is missing", at: position)
            }
            guard rootSeen else { throw ManifestError("no root element", at: position) }
            return nil
        }
        guard input[position] == UInt8(ascii: "<") else { return try text() }
        let start = position
        switch byte(at: position + 1) {
        case UInt8(ascii: "/"): return try endTag()
        case UInt8(ascii: "?"): return try processingInstruction()
        case UInt8(ascii: "!"):
            if matches("<!--", at: start) { return try comment() }
            if matches("<![CDATA[", at: start) { return try cdata() }
            if matches("<!DOCTYPE", at: start) {
                throw ManifestError("a DTD (<!DOCTYPE>): an MPD with a DTD is refused, so no entity is ever declared or fetched", at: start)
            }
            if matches("<!ENTITY", at: start) {
                throw ManifestError("an entity declaration: only XML's five predefined entities are read", at: start)
            }
            throw ManifestError("a markup declaration (<!…>), which an MPD does not hold", at: start)
        default: return try startTag()
        }
    }

    /// The value of an attribute as XML reads it: references decoded, each
    /// literal tab, line end or space a space (XML 1.0 §3.3.3).
    func value(of attribute: MPDAttribute) throws(ManifestError) -> String {
        if !attribute.needsDecoding { return String(decoding: input[attribute.valueRange], as: UTF8.self) }
        return try decode(attribute.valueRange, attribute: true)
    }

    /// A run of text as XML reads it: references decoded, line ends as LF (XML 1.0 §2.11).
    func text(in range: Range<Int>) throws(ManifestError) -> String {
        try decode(range, attribute: false)
    }

    // MARK: - The prologue

    private mutating func readDeclaration() throws(ManifestError) {
        guard matches("<?xml", at: position), let after = byte(at: position + 5), Self.isSpace(after) || after == UInt8(ascii: "?") else {
            return
        }
        let start = position
        guard let end = find("?>", from: position + 5, within: limits.maximumValueBytes) else {
            throw ManifestError("an XML declaration without its '?>'", at: start)
        }
        var index = position + 5
        var seen: [String] = []
        while true {
            while index < end, Self.isSpace(input[index]) { index += 1 }
            guard index < end else { break }
            let nameStart = index
            while index < end, Self.isNameByte(input[index]) { index += 1 }
            let name = String(decoding: input[nameStart..<index], as: UTF8.self)
            while index < end, Self.isSpace(input[index]) { index += 1 }
            guard index < end, input[index] == UInt8(ascii: "=") else {
                throw ManifestError("an XML declaration that cannot be read", at: index)
            }
            index += 1
            while index < end, Self.isSpace(input[index]) { index += 1 }
            guard index < end, input[index] == UInt8(ascii: "\"") || input[index] == UInt8(ascii: "'") else {
                throw ManifestError("an XML declaration that cannot be read", at: index)
            }
            let quote = input[index]
            let valueStart = index + 1
            guard let close = input[valueStart..<end].firstIndex(of: quote) else {
                throw ManifestError("an XML declaration that cannot be read", at: index)
            }
            let value = String(decoding: input[valueStart..<close], as: UTF8.self)
            index = close + 1
            let order = ["version", "encoding", "standalone"]
            guard let rank = order.firstIndex(of: name), !seen.contains(name), seen.allSatisfy({ order.firstIndex(of: $0)! < rank }) else {
                throw ManifestError("an XML declaration with a pseudo-attribute out of place", at: nameStart)
            }
            if seen.isEmpty, name != "version" { throw ManifestError("an XML declaration without its version", at: nameStart) }
            seen.append(name)
            switch name {
            case "version" where value != "1.0":
                throw ManifestError("XML version '\(value)'; only 1.0 is read", at: valueStart)
            case "encoding" where value.lowercased() != "utf-8":
                throw ManifestError("an XML declaration naming an encoding other than UTF-8", at: valueStart)
            case "standalone" where value != "yes" && value != "no":
                throw ManifestError("an XML declaration whose standalone is neither yes nor no", at: valueStart)
            default: break
            }
            guard index == end || Self.isSpace(input[index]) else {
                throw ManifestError("an XML declaration that cannot be read", at: index)
            }
        }
        guard seen.first == "version" else { throw ManifestError("an XML declaration without its version", at: start) }
        position = end + 2
    }

    // MARK: - Markup

    private mutating func startTag() throws(ManifestError) -> MPDToken {
        let start = position
        if rootSeen && openElements.isEmpty {
            throw ManifestError("a second root element: an MPD has one", at: start)
        }
        guard openElements.count < limits.maximumDepth else {
            throw ManifestError("elements nested deeper than \(limits.maximumDepth)", at: start)
        }
        position += 1
        let nameRange = try name()
        attributes.removeAll(keepingCapacity: true)
        seenNames.removeAll(keepingCapacity: true)
        var rawPrefixes: [(prefix: Range<Int>?, local: Range<Int>)] = []
        var declaredHere: [String] = []
        var selfClosing = false
        while true {
            let hadSpace = skipSpace()
            guard let next = byte(at: position) else { throw ManifestError("a start tag without its '>'", at: start) }
            if next == UInt8(ascii: ">") {
                position += 1
                break
            }
            if next == UInt8(ascii: "/") {
                guard byte(at: position + 1) == UInt8(ascii: ">") else { throw ManifestError("a '/' in a start tag not before '>'", at: position) }
                position += 2
                selfClosing = true
                break
            }
            guard hadSpace else { throw ManifestError("an attribute not separated from what precedes it by a space", at: position) }
            guard attributes.count < limits.maximumAttributes else {
                throw ManifestError("more than \(limits.maximumAttributes) attributes on one element", at: position)
            }
            let attributeName = try name()
            let qualified = String(decoding: input[attributeName], as: UTF8.self)
            guard seenNames.insert(qualified).inserted else {
                throw ManifestError("the attribute '\(qualified)' twice on one element", at: attributeName.lowerBound)
            }
            skipSpace()
            guard byte(at: position) == UInt8(ascii: "=") else { throw ManifestError("an attribute without '='", at: position) }
            position += 1
            skipSpace()
            let (valueRange, quote, needsDecoding) = try attributeValue()
            let parts = split(attributeName)
            rawPrefixes.append(parts)
            attributes.append(
                MPDAttribute(
                    name: MPDName(namespace: nil, localName: String(decoding: input[parts.local], as: UTF8.self), range: attributeName),
                    valueRange: valueRange,
                    quote: quote,
                    needsDecoding: needsDecoding
                )
            )
        }
        // Namespace declarations first: they apply to the element's own name and attributes.
        for (index, parts) in rawPrefixes.enumerated() {
            let attribute = attributes[index]
            let prefix = parts.prefix.map { String(decoding: input[$0], as: UTF8.self) }
            let declaredPrefix: String
            if prefix == nil, attribute.name.localName == "xmlns" {
                declaredPrefix = ""
            } else if prefix == "xmlns" {
                declaredPrefix = attribute.name.localName
            } else {
                continue
            }
            let uri = try value(of: attribute)
            if declaredPrefix == "xmlns" { throw ManifestError("the prefix xmlns declared", at: attribute.name.range.lowerBound) }
            if declaredPrefix == "xml" && uri != Self.xmlNamespace || declaredPrefix != "xml" && uri == Self.xmlNamespace {
                throw ManifestError(
                    "the prefix xml bound to another namespace, or its namespace to another prefix",
                    at: attribute.name.range.lowerBound
                )
            }
            if !declaredPrefix.isEmpty && uri.isEmpty {
                throw ManifestError("a prefix bound to no namespace (xmlns:\(declaredPrefix)=\"\")", at: attribute.name.range.lowerBound)
            }
            bindings[declaredPrefix, default: []].append(uri.isEmpty ? nil : uri)
            declaredHere.append(declaredPrefix)
            attributes[index].name.namespace = Self.xmlnsNamespace
        }
        declared.append(declaredHere)
        let elementParts = split(nameRange)
        let elementPrefix = elementParts.prefix.map { String(decoding: input[$0], as: UTF8.self) } ?? ""
        let elementNamespace: String?
        if let binding = bindings[elementPrefix]?.last {
            elementNamespace = binding
        } else if elementPrefix.isEmpty {
            elementNamespace = nil
        } else {
            throw ManifestError("the undeclared prefix '\(elementPrefix)'", at: nameRange.lowerBound)
        }
        element = MPDName(namespace: elementNamespace, localName: String(decoding: input[elementParts.local], as: UTF8.self), range: nameRange)
        seenExpandedNames.removeAll(keepingCapacity: true)
        for (index, parts) in rawPrefixes.enumerated() where attributes[index].name.namespace == nil {
            guard let prefixRange = parts.prefix else { continue }
            let prefix = String(decoding: input[prefixRange], as: UTF8.self)
            guard let binding = bindings[prefix]?.last, let namespace = binding else {
                throw ManifestError("the undeclared prefix '\(prefix)'", at: prefixRange.lowerBound)
            }
            attributes[index].name.namespace = namespace
            guard seenExpandedNames.insert(namespace + " " + attributes[index].name.localName).inserted else {
                throw ManifestError("one attribute twice on one element, under two prefixes", at: prefixRange.lowerBound)
            }
        }
        return try opened(at: start, selfClosing: selfClosing)
    }

    private mutating func opened(at start: Int, selfClosing: Bool) throws(ManifestError) -> MPDToken {
        if openElements.isEmpty { rootSeen = true }
        openElements.append(element)
        closesItself = selfClosing
        return .startElement(selfClosing: selfClosing)
    }

    private mutating func endTag() throws(ManifestError) -> MPDToken {
        let start = position
        position += 2
        let nameRange = try name()
        skipSpace()
        guard byte(at: position) == UInt8(ascii: ">") else { throw ManifestError("an end tag without its '>'", at: position) }
        position += 1
        guard let open = openElements.last else { throw ManifestError("an end tag with no element open", at: start) }
        guard input[nameRange].elementsEqual(input[open.range]) else {
            throw ManifestError(
                "the end tag </\(String(decoding: input[nameRange], as: UTF8.self))> does not close <\(String(decoding: input[open.range], as: UTF8.self))>",
                at: start
            )
        }
        return try closeElement(at: start)
    }

    private mutating func closeElement(at offset: Int) throws(ManifestError) -> MPDToken {
        guard let open = openElements.popLast(), let prefixes = declared.popLast() else {
            throw ManifestError("an end tag with no element open", at: offset)
        }
        for prefix in prefixes { bindings[prefix]?.removeLast() }
        element = open
        return .endElement
    }

    private mutating func comment() throws(ManifestError) -> MPDToken {
        let start = position
        let contentStart = position + 4
        guard let dashes = find("--", from: contentStart, within: limits.maximumValueBytes) else {
            throw ManifestError("a comment without its '-->', or longer than \(limits.maximumValueBytes) bytes", at: start)
        }
        guard byte(at: dashes + 2) == UInt8(ascii: ">") else { throw ManifestError("'--' inside a comment", at: dashes) }
        position = dashes + 3
        return .comment(contentStart..<dashes)
    }

    private mutating func cdata() throws(ManifestError) -> MPDToken {
        let start = position
        guard !openElements.isEmpty else { throw ManifestError("a CDATA section outside the root element", at: start) }
        let contentStart = position + 9
        guard let end = find("]]>", from: contentStart, within: limits.maximumValueBytes) else {
            throw ManifestError("a CDATA section without its ']]>', or longer than \(limits.maximumValueBytes) bytes", at: start)
        }
        position = end + 3
        return .cdata(contentStart..<end)
    }

    private mutating func processingInstruction() throws(ManifestError) -> MPDToken {
        let start = position
        position += 2
        let target = try name()
        let targetName = String(decoding: input[target], as: UTF8.self)
        if targetName.lowercased() == "xml" {
            throw ManifestError("an XML declaration not at the start of the document", at: start)
        }
        guard target.count == targetName.utf8.count, !targetName.contains(":") else {
            throw ManifestError("a processing instruction whose target cannot be read", at: target.lowerBound)
        }
        guard let end = find("?>", from: position, within: limits.maximumValueBytes) else {
            throw ManifestError("a processing instruction without its '?>', or longer than \(limits.maximumValueBytes) bytes", at: start)
        }
        guard end == position || Self.isSpace(input[position]) else {
            throw ManifestError("a processing instruction's target not followed by a space", at: position)
        }
        position = end + 2
        return .processingInstruction(start..<position)
    }

    // MARK: - Text

    private mutating func text() throws(ManifestError) -> MPDToken {
        let start = position
        var index = position
        while index < input.count, input[index] != UInt8(ascii: "<") {
            let byte = input[index]
            if byte == UInt8(ascii: "&") {
                index = try reference(at: index).end
                continue
            }
            if byte == UInt8(ascii: ">"), index >= start + 2, input[index - 1] == UInt8(ascii: "]"), input[index - 2] == UInt8(ascii: "]") {
                throw ManifestError("']]>' in text", at: index - 2)
            }
            if openElements.isEmpty, !Self.isSpace(byte) {
                throw ManifestError("text outside the root element", at: index)
            }
            index += 1
            if index - start > limits.maximumValueBytes {
                throw ManifestError("a run of text longer than \(limits.maximumValueBytes) bytes", at: start)
            }
        }
        position = index
        return .text(start..<index)
    }

    // MARK: - Pieces

    /// A name (prefix and `:` included) at `position`, bounded; `position` moves past it.
    private mutating func name() throws(ManifestError) -> Range<Int> {
        let start = position
        guard let first = byte(at: position), Self.isNameStartByte(first) else {
            throw ManifestError("a name expected", at: position)
        }
        var colons = 0
        while let byte = byte(at: position), Self.isNameByte(byte) {
            if byte == UInt8(ascii: ":") { colons += 1 }
            position += 1
            if position - start > limits.maximumNameBytes {
                throw ManifestError("a name longer than \(limits.maximumNameBytes) bytes", at: start)
            }
        }
        let range = start..<position
        if colons > 1 || input[range.lowerBound] == UInt8(ascii: ":") || input[range.upperBound - 1] == UInt8(ascii: ":") {
            throw ManifestError("a name with a misplaced ':'", at: start)
        }
        return range
    }

    private func split(_ name: Range<Int>) -> (prefix: Range<Int>?, local: Range<Int>) {
        guard let colon = input[name].firstIndex(of: UInt8(ascii: ":")) else { return (nil, name) }
        return (name.lowerBound..<colon, (colon + 1)..<name.upperBound)
    }

    private mutating func attributeValue() throws(ManifestError) -> (Range<Int>, UInt8, Bool) {
        guard let quote = byte(at: position), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw ManifestError("an attribute value not in quotes", at: position)
        }
        let start = position + 1
        var index = start
        var needsDecoding = false
        while true {
            guard index < input.count else { throw ManifestError("an attribute value without its closing quote", at: position) }
            let byte = input[index]
            if byte == quote { break }
            if byte == UInt8(ascii: "<") { throw ManifestError("a '<' in an attribute value", at: index) }
            if byte == UInt8(ascii: "&") {
                needsDecoding = true
                index = try reference(at: index).end
            } else {
                if byte == 0x09 || byte == 0x0A || byte == 0x0D { needsDecoding = true }
                index += 1
            }
            if index - start > limits.maximumValueBytes {
                throw ManifestError("an attribute value longer than \(limits.maximumValueBytes) bytes", at: start)
            }
        }
        position = index + 1
        return (start..<index, quote, needsDecoding)
    }

    /// The reference at `index` (`&…;`): one of the five predefined entities
    /// or a character reference to a character XML allows.
    private func reference(at index: Int) throws(ManifestError) -> (scalar: Unicode.Scalar, end: Int) {
        var cursor = index + 1
        if byte(at: cursor) == UInt8(ascii: "#") {
            cursor += 1
            let hex = byte(at: cursor) == UInt8(ascii: "x")
            if hex { cursor += 1 }
            var value: UInt32 = 0
            let digitsStart = cursor
            while let byte = byte(at: cursor), byte != UInt8(ascii: ";") {
                let digit: UInt32
                if hex, let nibble = ByteRules.hexValue(byte) {
                    digit = UInt32(nibble)
                } else if !hex, byte >= 0x30, byte <= 0x39 {
                    digit = UInt32(byte - 0x30)
                } else {
                    throw ManifestError("a character reference that cannot be read", at: index)
                }
                value = value * (hex ? 16 : 10) + digit
                if value > 0x10FFFF { throw ManifestError("a character reference beyond U+10FFFF", at: index) }
                cursor += 1
            }
            guard cursor > digitsStart, byte(at: cursor) == UInt8(ascii: ";") else {
                throw ManifestError("a character reference that cannot be read", at: index)
            }
            let allowed =
                value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
            guard allowed, let scalar = Unicode.Scalar(value) else {
                throw ManifestError("a character reference to a character XML does not allow", at: index)
            }
            return (scalar, cursor + 1)
        }
        let nameStart = cursor
        while let byte = byte(at: cursor), byte != UInt8(ascii: ";"), cursor - nameStart < 8 { cursor += 1 }
        guard byte(at: cursor) == UInt8(ascii: ";") else {
            throw ManifestError("a '&' that does not start a reference (write &amp;)", at: index)
        }
        let scalar: Unicode.Scalar
        switch String(decoding: input[nameStart..<cursor], as: UTF8.self) {
        case "amp": scalar = "&"
        case "lt": scalar = "<"
        case "gt": scalar = ">"
        case "quot": scalar = "\""
        case "apos": scalar = "'"
        default:
            throw ManifestError("an entity that is not one of XML's five (&amp; &lt; &gt; &quot; &apos;): no other is declared", at: index)
        }
        return (scalar, cursor + 1)
    }

    private func decode(_ range: Range<Int>, attribute: Bool) throws(ManifestError) -> String {
        var scalars = String.UnicodeScalarView()
        var plainStart = range.lowerBound
        var index = range.lowerBound
        func flush(_ end: Int) {
            if end > plainStart { scalars.append(contentsOf: String(decoding: input[plainStart..<end], as: UTF8.self).unicodeScalars) }
        }
        while index < range.upperBound {
            let byte = input[index]
            if byte == UInt8(ascii: "&") {
                flush(index)
                let reference = try reference(at: index)
                scalars.append(reference.scalar)
                index = reference.end
                plainStart = index
            } else if byte == 0x0D || (attribute && (byte == 0x09 || byte == 0x0A)) {
                flush(index)
                // CR LF is one line end; in an attribute every line end or tab is a space.
                if byte == 0x0D, index + 1 < range.upperBound, input[index + 1] == 0x0A { index += 1 }
                scalars.append(attribute ? " " : "\n")
                index += 1
                plainStart = index
            } else {
                index += 1
            }
        }
        flush(range.upperBound)
        return String(scalars)
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = position
        while let byte = byte(at: position), Self.isSpace(byte) { position += 1 }
        return position > start
    }

    private func byte(at index: Int) -> UInt8? { index < input.count ? input[index] : nil }

    private func matches(_ text: StaticString, at index: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= input.count else { return false }
        var offset = 0
        while offset < count {
            if input[index + offset] != text.utf8Start[offset] { return false }
            offset += 1
        }
        return true
    }

    /// The offset of `needle` at or after `start`, looking at no more than
    /// `limit` bytes past `start`.
    private func find(_ needle: StaticString, from start: Int, within limit: Int) -> Int? {
        let last = min(input.count - needle.utf8CodeUnitCount, start + limit)
        guard start <= last else { return nil }
        let first = needle.utf8Start[0]
        var index = start
        while index <= last {
            if input[index] == first, matches(needle, at: index) { return index }
            index += 1
        }
        return nil
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameStartByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStartByte(byte) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}

/// An element's or attribute's name: its namespace (nil for none) and local
/// name, and where its qualified name lies in the input.
struct MPDName: Sendable, Hashable {
    var namespace: String?
    var localName: String
    var range: Range<Int>

    /// In DASH's namespace, or in none (an MPD written without `xmlns`).
    var isDASH: Bool { namespace == nil || namespace == MPDScanner.dashNamespace }
}

/// One attribute of a start tag: its name, and the raw bytes of its value
/// between the quotes (what the rewriter replaces).
struct MPDAttribute: Sendable, Hashable {
    var name: MPDName
    var valueRange: Range<Int>
    /// `"` or `'`: what the value must not hold unescaped when written back.
    var quote: UInt8
    /// Whether the raw bytes differ from the value (a reference, or a tab or line end to normalise).
    var needsDecoding: Bool
}

/// What ``MPDScanner/next()`` hands out.
enum MPDToken: Sendable, Hashable {
    /// An element began; ``MPDScanner/element`` and ``MPDScanner/attributes`` describe it.
    /// A self-closing element is followed at once by its `.endElement`.
    case startElement(selfClosing: Bool)
    /// An element ended; ``MPDScanner/element`` names it.
    case endElement
    /// A run of character data, raw (references not decoded), up to the next markup.
    case text(Range<Int>)
    /// A comment's content, kept as written.
    case comment(Range<Int>)
    /// A processing instruction (`<?…?>`, whole), kept as written.
    case processingInstruction(Range<Int>)
    /// A CDATA section's content, kept as written.
    case cdata(Range<Int>)
}

extension ManifestError {
    /// An MPD reading's error at a byte offset.
    init(_ reason: TerminalText, at offset: Int) {
        self.init(reason, offset: offset)
    }
}
