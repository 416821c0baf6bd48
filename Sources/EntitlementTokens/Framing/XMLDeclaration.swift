/// The XML declaration a token may start with: `<?xml version="1.0"?>`,
/// optionally naming UTF-8 and standalone, nothing else (docs/DESIGN.md#parsing-rules).
enum XMLDeclaration {
    private static var target: StaticString { "<?xml" }

    /// The range of the text after `<?xml` when the processing instruction
    /// from `start` to `end` (its `?>`) has exactly the target `xml`.
    static func body(in buffer: Span<UInt8>, start: Int, end: Int) -> Range<Int>? {
        let count = target.utf8CodeUnitCount
        guard end - start > count, ByteSearch.matches(target, in: buffer, at: start) == true,
            buffer[start + count].isASCIIWhitespace
        else { return nil }
        return (start + count)..<end
    }

    /// What is wrong with the declaration whose pseudo-attributes are `body`, or nil:
    /// version (1.0) first, then optional encoding (UTF-8 only) and standalone.
    static func problem(in body: Span<UInt8>) -> (TokenError.Code, String)? {
        let text = body.decodedAsUTF8
        let malformed = (TokenError.Code.invalidXMLDeclaration, "malformed XML declaration")
        var attributes: [(String, String)] = []
        var rest = Substring(text)
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            if rest.isEmpty { break }
            guard let equals = rest.firstIndex(of: "=") else { return malformed }
            let name = String(rest[..<equals]).trimmingTrailingNewlines()
            var after = rest[rest.index(after: equals)...].drop(while: { $0 == " " })
            guard let quote = after.first, quote == "\"" || quote == "'" else { return malformed }
            after = after.dropFirst()
            guard let close = after.firstIndex(of: quote) else { return malformed }
            attributes.append((String(name), String(after[..<close])))
            rest = after[after.index(after: close)...]
        }
        guard attributes.first?.0 == "version", attributes.first?.1 == "1.0" else {
            return (.invalidXMLDeclaration, "the XML declaration must start with version=\"1.0\"")
        }
        for (name, value) in attributes.dropFirst() {
            switch name {
            case "encoding":
                if value.lowercased() != "utf-8" {
                    return (.unsupportedEncoding, "the XML declaration names \(value); tokens must be UTF-8")
                }
            case "standalone" where value == "yes" || value == "no":
                break
            default:
                return (.invalidXMLDeclaration, "unexpected '\(name)=\"\(value)\"' in the XML declaration")
            }
        }
        return nil
    }
}
