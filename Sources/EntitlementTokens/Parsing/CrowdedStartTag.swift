/// Finds a start tag with more attributes than libxml2 should ever be given.
///
/// Why before libxml2 and not only in the SAX callbacks: libxml2 2.9 checks
/// each attribute of a start tag against every earlier one of the same tag
/// (the "unique attribute" rule) before it calls `startElementNs`, so a 64 KiB
/// token whose root carries 13,000 attributes costs tens of milliseconds inside
/// libxml2, where no callback can stop it. The callbacks enforce the limits
/// exactly (``DecoderConfiguration/maxAttributesPerElement`` and
/// ``DecoderConfiguration/maxAttributesPerToken``); this scan only keeps such a
/// tag from reaching libxml2, with the same error.
///
/// In a start tag every attribute (a namespace declaration included) has
/// exactly one `=` outside quotes, so counting those counts the attributes.
/// Text and CDATA sections are skipped; comments, processing instructions and
/// declarations are skipped too (libxml2 refuses them afterwards).
enum CrowdedStartTag {
    /// The offset of the `<` of the first start tag with more than `limit`
    /// attributes, or nil. Linear in `bytes`.
    static func find(in bytes: Span<UInt8>, limit: Int) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            let start = index
            index += 1
            guard index < count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "!"):
                if matches(cdataStart, in: bytes, at: index + 1) {
                    index = end(of: cdataEnd, in: bytes, from: index + 1 + cdataStart.count)
                } else {
                    index = end(of: tagEnd, in: bytes, from: index)
                }
            case UInt8(ascii: "?"), UInt8(ascii: "/"):
                index = end(of: tagEnd, in: bytes, from: index)
            default:
                var attributes = 0
                var quote: UInt8 = 0
                while index < count {
                    let byte = bytes[index]
                    index += 1
                    if quote != 0 {
                        if byte == quote { quote = 0 }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "=") {
                        attributes += 1
                        if attributes > limit { return start }
                    } else if byte == UInt8(ascii: ">") {
                        break
                    }
                }
            }
        }
        return nil
    }

    private static let cdataStart = Array("[CDATA[".utf8)
    private static let cdataEnd = Array("]]>".utf8)
    private static let tagEnd = Array(">".utf8)

    private static func matches(_ marker: [UInt8], in bytes: Span<UInt8>, at index: Int) -> Bool {
        guard index + marker.count <= bytes.count else { return false }
        for offset in marker.indices where bytes[index + offset] != marker[offset] { return false }
        return true
    }

    /// The index just past the first `terminator` at or after `from`, or the end.
    private static func end(of terminator: [UInt8], in bytes: Span<UInt8>, from: Int) -> Int {
        var index = from
        while index + terminator.count <= bytes.count {
            if matches(terminator, in: bytes, at: index) { return index + terminator.count }
            index += 1
        }
        return bytes.count
    }
}
