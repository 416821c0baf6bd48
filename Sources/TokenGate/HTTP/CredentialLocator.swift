import HTTPTypes

/// Finds a token or a session credential in a request: in the query of the
/// original URI (raw, still percent-encoded: the library decodes transport
/// forms itself), in a header, or in a cookie.
///
/// Names are compared byte for byte; the first match wins. Every scan is
/// linear in the header's length, and headers are bounded by the server.
enum CredentialLocator {
    /// The raw value of query parameter `name` in `uri` (`/path?a=1&token=…`).
    static func parameter(_ name: String, inURI uri: Substring) -> Substring? {
        // Bytes, not Characters: a token is a kilobyte of ASCII, and walking it
        // grapheme by grapheme cost a quarter of a request. One pass, no array.
        let bytes = uri.utf8
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        var start = bytes.index(after: question)
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        while start < end {
            let pairEnd = bytes[start..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
            let pair = bytes[start..<pairEnd]
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")), pair[..<equals].elementsEqual(name.utf8) {
                let valueStart = bytes.index(after: equals)
                return valueStart == pairEnd ? nil : uri[valueStart..<pairEnd]
            }
            start = pairEnd == end ? end : bytes.index(after: pairEnd)
        }
        return nil
    }

    /// The first parameter of `names` present in `uri`.
    static func parameter(_ names: [String], inURI uri: Substring) -> Substring? {
        for name in names {
            if let value = parameter(name, inURI: uri) { return value }
        }
        return nil
    }

    /// The value of cookie `name` in the request's `Cookie` headers.
    static func cookie(_ name: String, in headers: HTTPFields) -> Substring? {
        for line in headers[values: .cookie] {
            let bytes = line.utf8
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let pairEnd = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                var pair = bytes[start..<pairEnd]
                while let first = pair.first, first == 0x20 || first == 0x09 { pair = pair.dropFirst() }
                if let equals = pair.firstIndex(of: UInt8(ascii: "=")), pair[..<equals].elementsEqual(name.utf8) {
                    var value = pair[bytes.index(after: equals)...]
                    while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
                    if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                        value = value.dropFirst().dropLast()
                    }
                    return value.isEmpty ? nil : line[value.startIndex..<value.endIndex]
                }
                start = pairEnd == bytes.endIndex ? pairEnd : bytes.index(after: pairEnd)
            }
        }
        return nil
    }

    /// A non-empty header value.
    static func header(_ name: HTTPField.Name, in headers: HTTPFields) -> Substring? {
        guard let value = headers[name], !value.isEmpty else { return nil }
        return value[...]
    }
}
