/// A `multipart/form-data` body (RFC 7578), as the page's `FormData` and
/// `curl -F input=@tokens.txt -F key=@issuer.pub.pem` send it: how
/// `POST /debugger/report` takes the pasted text and a pasted public key
/// side by side. A text body stays the tokens alone.
///
/// Read strictly and bounded: the body is already at most
/// ``ReportEndpoints/maximumBodyBytes``; at most ``maximumParts`` parts, each
/// with at most ``maximumHeaderBytes`` of headers and a name from
/// ``DebuggerFormData/init(body:boundary:allowedNames:)``'s list, each name once.
/// The search for a boundary costs the body's length times the boundary's
/// (at most 70 bytes, RFC 2046), so reading is linear in the body.
struct DebuggerFormData: Sendable {
    static let maximumParts = 8
    static let maximumHeaderBytes = 4096

    struct Invalid: Error, Sendable, Equatable {
        var reason: String
    }

    /// Each part's content by its name, in the order sent.
    private(set) var parts: [(name: String, content: [UInt8])] = []

    func content(_ name: String) -> [UInt8]? {
        parts.first { $0.name == name }?.content
    }

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    /// Throws for a multipart type without a usable boundary.
    static func boundary(ofContentType contentType: String?) throws(Invalid) -> String? {
        guard let contentType else { return nil }
        let parameters = contentType.split(separator: ";", omittingEmptySubsequences: false)
        guard let type = parameters.first,
            type.trimmedOfSpaces.lowercased() == "multipart/form-data"
        else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0].trimmedOfSpaces.lowercased() == "boundary" else { continue }
            var value = pair[1].trimmedOfSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046 §5.1.1: 1 to 70 characters of bchars, not ending in a space.
            let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ")
            guard (1...70).contains(value.count), value.allSatisfy(allowed.contains), !value.hasSuffix(" ") else {
                throw Invalid(reason: "the multipart boundary must be 1 to 70 letters, digits or '()+_,-./:=? (RFC 2046)")
            }
            return value
        }
        throw Invalid(reason: "a multipart/form-data body needs a boundary parameter")
    }

    init(body: [UInt8], boundary: String, allowedNames: [String]) throws(Invalid) {
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]
        // The first delimiter opens the body (a preamble before it is allowed and ignored).
        guard var cursor = Self.find(delimiter, in: body, from: 0, atLineStart: true) else {
            throw Invalid(reason: "the multipart body has no '--\(boundary)' line")
        }
        cursor += delimiter.count
        while true {
            if body[cursor...].starts(with: [45, 45]) { break }  // "--": the close delimiter
            // Transport padding (RFC 2046) then the line break ending the delimiter line.
            while cursor < body.count, body[cursor] == 32 || body[cursor] == 9 { cursor += 1 }
            guard body[cursor...].starts(with: crlf) else {
                throw Invalid(reason: "a multipart delimiter line does not end with CRLF")
            }
            cursor += 2
            guard parts.count < Self.maximumParts else {
                throw Invalid(reason: "the multipart body has more than \(Self.maximumParts) parts")
            }
            guard let headersEnd = Self.find(crlf + crlf, in: body, from: cursor - 2, atLineStart: false),
                headersEnd - cursor <= Self.maximumHeaderBytes
            else {
                throw Invalid(reason: "a multipart part's headers do not end within \(Self.maximumHeaderBytes) bytes")
            }
            let name = try Self.name(fromHeaders: Array(body[cursor..<max(cursor, headersEnd)]))
            guard allowedNames.contains(name) else {
                throw Invalid(reason: "unknown part '\(name)'; the debugger reads \(allowedNames.map { "'\($0)'" }.joined(separator: ", "))")
            }
            guard content(name) == nil else { throw Invalid(reason: "the part '\(name)' is sent twice") }
            let contentStart = headersEnd + 4
            guard let next = Self.find(crlf + delimiter, in: body, from: contentStart, atLineStart: false) else {
                throw Invalid(reason: "the multipart body ends before its closing '--\(boundary)--'")
            }
            parts.append((name, Array(body[contentStart..<next])))
            cursor = next + 2 + delimiter.count
        }
    }

    /// The `name` of a part's `Content-Disposition: form-data; name="…"` (RFC 7578 §4.2).
    private static func name(fromHeaders bytes: [UInt8]) throws(Invalid) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\r\n") {
            let field = line.split(separator: ":", maxSplits: 1)
            guard field.count == 2, field[0].lowercased() == "content-disposition" else { continue }
            let parameters = field[1].split(separator: ";")
            guard parameters.first?.trimmedOfSpaces.lowercased() == "form-data" else {
                throw Invalid(reason: "a part's Content-Disposition is not form-data")
            }
            for parameter in parameters.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmedOfSpaces.lowercased() == "name" else { continue }
                var value = pair[1].trimmedOfSpaces
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                guard !value.isEmpty else { break }
                return value
            }
            throw Invalid(reason: "a part's Content-Disposition has no name")
        }
        throw Invalid(reason: "a part has no Content-Disposition header")
    }

    /// The index of the first `pattern` in `bytes` at or after `start`
    /// (at the start of the body or after a CRLF, when `atLineStart`).
    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int, atLineStart: Bool) -> Int? {
        guard let first = pattern.first, bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        var index = max(0, start)
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern),
                !atLineStart || index == 0 || (index >= 2 && bytes[index - 2] == 13 && bytes[index - 1] == 10)
            {
                return index
            }
            index += 1
        }
        return nil
    }
}

extension StringProtocol {
    /// Without the spaces and tabs around it (HTTP's optional white space).
    fileprivate var trimmedOfSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
