import EntitlementTokens
import HTTPTypes

/// Finds every token or session credential in a request: in the query of the
/// original URI (raw, still percent-encoded: the library decodes transport
/// forms itself), in a header, or in a cookie.
///
/// Every occurrence is returned, never only the first: a request that names a
/// credential twice with different values reads two ways (the gate's reading
/// and the proxy's, or the origin's), and docs/DESIGN.md#the-gates-reading-of-a-request answers that with 400 — which
/// the decision can only do if it sees both. Names are compared byte for byte,
/// undecoded, as nginx's `$arg_` does. Every scan is linear in the input, and
/// headers are bounded by the server.
enum CredentialLocator {
    /// The raw values of each query parameter of `names` in `uri`
    /// (`/path?a=1&token=…`), one list per name in the order of `names`, each
    /// in the order sent, empty values included (`token=` is a value:
    /// `token=&token=x` is two readings). One pass over the query, whatever
    /// the number of names: a token is a kilobyte of ASCII.
    ///
    /// The query is what lies between the first `?` and the first `#` (RFC
    /// 3986 §3.5): a `?` after a fragment mark opens no query, and a `token=`
    /// after it is not a token. `%23` is data and ends nothing.
    static func parameters(_ names: [String], inURI uri: Substring) -> [[Substring]] {
        var values = [[Substring]](repeating: [], count: names.count)
        // Bytes through a Span, not Characters nor the UTF-8 view's generic
        // index walk (docs/PERFORMANCE.md).
        let bytes = uri.utf8.span
        let pathEnd = GateRoute.pathEnd(in: bytes)
        guard pathEnd < bytes.count, bytes[pathEnd] == UInt8(ascii: "?") else { return values }
        // A media token makes the query a kilobyte or more: the `#` that ends
        // it, each pair's `&` and its name's `=` are found by the library's
        // byte search (`memchr`), each search bounded by the one before: a
        // byte is read by at most three searches, and the pass stays linear.
        let queryEnd = ByteSearch.firstIndex(of: UInt8(ascii: "#"), in: bytes, from: pathEnd + 1) ?? bytes.count
        let query = bytes.extracting(..<queryEnd)
        var start = pathEnd + 1
        while start < queryEnd {
            let pairEnd = ByteSearch.firstIndex(of: UInt8(ascii: "&"), in: query, from: start) ?? queryEnd
            if let equals = ByteSearch.firstIndex(of: UInt8(ascii: "="), in: query.extracting(..<pairEnd), from: start) {
                // Every name it is, not the first: a name given twice reads the value twice.
                for (which, name) in names.enumerated() where Self.span(bytes, from: start, to: equals, holds: name) {
                    let utf8 = uri.utf8
                    values[which].append(uri[utf8.index(utf8.startIndex, offsetBy: equals + 1)..<utf8.index(utf8.startIndex, offsetBy: pairEnd)])
                }
            }
            start = pairEnd + 1
        }
        return values
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

    /// Every non-empty value of cookie `name` in the request's `Cookie`
    /// headers, in order: browsers send two cookies of one name whenever two
    /// paths match, and only the decision can tell which one is valid.
    static func cookies(_ name: String, in headers: HTTPFields) -> [Substring] {
        var values: [Substring] = []
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
                    if !value.isEmpty { values.append(line[value.startIndex..<value.endIndex]) }
                }
                start = pairEnd == bytes.endIndex ? pairEnd : bytes.index(after: pairEnd)
            }
        }
        return values
    }

    /// A non-empty header value.
    static func header(_ name: HTTPField.Name, in headers: HTTPFields) -> Substring? {
        guard let value = headers[name], !value.isEmpty else { return nil }
        return value[...]
    }

    /// How many field lines of `name` the request has. Two lines cannot be
    /// told apart from one joined `a, b` value once merged, and URIs hold
    /// commas, so the count of lines is what decides ambiguity.
    static func fieldLineCount(_ name: HTTPField.Name, in headers: HTTPFields) -> Int {
        var count = 0
        for field in headers where field.name == name { count += 1 }
        return count
    }
}
