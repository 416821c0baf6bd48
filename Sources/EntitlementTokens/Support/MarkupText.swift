/// Text for markup (XML, HTML, SVG): the one escaping of the toolkit's
/// writers that put a string into a document — the manifest rewriter's
/// attributes and the HAR report's HTML page.
///
/// `&`, `<`, `>`, `"` and `'` become the five entities XML predefines (HTML5
/// knows them too), so the result is safe in element text and in an
/// attribute quoted either way, and nothing else changes.
package enum MarkupText {
    /// `bytes` with the five markup characters as entities; the rest as it is.
    package static func escaped(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): out.append(contentsOf: "&apos;".utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    /// Input-derived text for a page a person reads (HTML or SVG text, or a
    /// quoted attribute): first every character ``TerminalText`` makes
    /// visible (controls, bidi overrides, line separators: a document may not
    /// carry C0 controls even as references, and a bidi override would
    /// reorder what the reader sees), then the markup characters as entities.
    package static func forPage(_ text: some StringProtocol) -> String {
        let visible = TerminalText.escaped(text)
        guard
            visible.utf8.contains(where: {
                $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'")
            })
        else { return visible }
        return String(decoding: escaped(visible.utf8), as: UTF8.self)
    }
}
