import EntitlementTokens

/// An HLS tag's attribute list read strictly (RFC 8216 §4.2): `NAME=value`
/// pairs split by `,`, names of `A`–`Z`, `0`–`9` and `-`, values quoted
/// (`"…"` without `"`, CR or LF) or not (no `"`, `,` or white space), no
/// name twice, nothing left over. A list read two ways could hide a URI from
/// the rewriting, so anything else makes the manifest unreadable.
struct HLSAttributeList {
    struct Attribute {
        let name: String
        /// The value's bytes in the line, inside the quotes for a quoted string.
        let value: Range<Int>
        let quoted: Bool
    }

    private(set) var attributes: [Attribute] = []

    /// The most attributes one tag holds: well above any tag RFC 8216 defines.
    static let maximumCount = 256

    /// Reads `line[range]`; offsets in the result are the line's.
    init(_ line: ArraySlice<UInt8>) throws(ManifestError) {
        var index = line.startIndex
        var names: Set<String> = []
        while index < line.endIndex {
            let nameStart = index
            while index < line.endIndex, line[index] != UInt8(ascii: "=") {
                let byte = line[index]
                guard (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-") else {
                    throw ManifestError("an attribute name with \(ManifestURI.name(of: byte)) (only A-Z, 0-9 and '-')", offset: index)
                }
                index += 1
            }
            guard index > nameStart, index < line.endIndex else { throw ManifestError("an attribute without a name or an '='", offset: nameStart) }
            let name = String(decoding: line[nameStart..<index], as: UTF8.self)
            guard names.insert(name).inserted else { throw ManifestError("the attribute \(name) twice", offset: nameStart) }
            guard names.count <= Self.maximumCount else { throw ManifestError("more than \(Self.maximumCount) attributes", offset: nameStart) }
            index += 1
            let value: Range<Int>
            let quoted = index < line.endIndex && line[index] == UInt8(ascii: "\"")
            if quoted {
                let start = index + 1
                guard let close = line[start...].firstIndex(of: UInt8(ascii: "\"")) else {
                    throw ManifestError("the quoted value of \(name) has no closing '\"'", offset: index)
                }
                value = start..<close
                index = close + 1
            } else {
                let start = index
                while index < line.endIndex, line[index] != UInt8(ascii: ",") {
                    let byte = line[index]
                    guard byte > 0x20, byte != 0x7F, byte != UInt8(ascii: "\"") else {
                        throw ManifestError("the value of \(name) holds \(ManifestURI.name(of: byte)) outside quotes", offset: index)
                    }
                    index += 1
                }
                guard index > start else { throw ManifestError("the attribute \(name) without a value", offset: start) }
                value = start..<index
            }
            attributes.append(Attribute(name: name, value: value, quoted: quoted))
            if index < line.endIndex {
                guard line[index] == UInt8(ascii: ",") else {
                    throw ManifestError("text after the quoted value of \(name)", offset: index)
                }
                index += 1
                guard index < line.endIndex else { throw ManifestError("an attribute list that ends with ','", offset: index) }
            }
        }
        // Quoted strings hold neither CR nor LF: the line has neither LF, and a CR would be inside it.
        for attribute in attributes where attribute.quoted && line[attribute.value].contains(0x0D) {
            throw ManifestError("the quoted value of \(attribute.name) holds a carriage return", offset: attribute.value.lowerBound)
        }
    }

    subscript(name: String) -> Attribute? { attributes.first { $0.name == name } }
}
