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
        // Bytes through a Span, not Characters nor the UTF-8 view's generic
        // index walk: a token is a kilobyte of ASCII, scanned for each name
        // the gate looks for (docs/PERFORMANCE.md).
        let bytes = uri.utf8.span
        func next(_ byte: UInt8, from start: Int, before end: Int) -> Int {
            var index = start
            while index < end, bytes[index] != byte { index += 1 }
            return index
        }
        let question = next(UInt8(ascii: "?"), from: 0, before: bytes.count)
        guard question < bytes.count else { return nil }
        let end = next(UInt8(ascii: "#"), from: question + 1, before: bytes.count)
        var start = question + 1
        while start < end {
            let pairEnd = next(UInt8(ascii: "&"), from: start, before: end)
            let equals = next(UInt8(ascii: "="), from: start, before: pairEnd)
            if equals < pairEnd, Self.span(bytes, from: start, to: equals, holds: name) {
                guard equals + 1 < pairEnd else { return nil }
                let utf8 = uri.utf8
                return uri[utf8.index(utf8.startIndex, offsetBy: equals + 1)..<utf8.index(utf8.startIndex, offsetBy: pairEnd)]
            }
            start = pairEnd + 1
        }
        return nil
    }

    /// Whether `bytes[start..<end]` is exactly `name`'s UTF-8.
    private static func span(_ bytes: Span<UInt8>, from start: Int, to end: Int, holds name: String) -> Bool {
        var index = start
        for byte in name.utf8 {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
        }
        return index == end
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
