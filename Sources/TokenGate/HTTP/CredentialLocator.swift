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
        guard let question = uri.firstIndex(of: "?") else { return nil }
        var rest = uri[uri.index(after: question)...]
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        // One pass over the query, no array of pairs: this runs on every request.
        while !rest.isEmpty {
            let end = rest.firstIndex(of: "&") ?? rest.endIndex
            let pair = rest[..<end]
            if let equals = pair.firstIndex(of: "="), pair[..<equals].utf8.elementsEqual(name.utf8) {
                let value = pair[pair.index(after: equals)...]
                return value.isEmpty ? nil : value
            }
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
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
            for pair in line.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " || $0 == "\t" })
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals].utf8.elementsEqual(name.utf8) {
                    var value = trimmed[trimmed.index(after: equals)...]
                    while value.last == " " || value.last == "\t" { value = value.dropLast() }
                    if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
                    return value.isEmpty ? nil : value
                }
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
