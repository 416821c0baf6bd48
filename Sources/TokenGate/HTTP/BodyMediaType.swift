import HTTPTypes

/// The media type a request names for its body, judged against what a route
/// reads (docs/openapi.yaml declares the same): the `Content-Type` essence
/// before any `;` parameter, compared without ASCII case (RFC 9110 §8.3.1). A body
/// of another type is 415, never read as the route's own: a form or a text
/// body that happens to parse as JSON is not an exchange.
///
/// Every exchange passes here, so the accepted case reads the field's bytes
/// and makes nothing; only a refusal builds its message.
struct BodyMediaType {
    /// The accepted essences, lower-case ASCII, in the order a refusal names them.
    let essences: [String]

    /// `/v1/playback`: JSON only, named.
    static let json = BodyMediaType(essences: ["application/json"])
    /// `/v1/verify` and `/v1/inspect`: tokens as text, a vendor's JSON response, or bytes.
    static let tokens = BodyMediaType(essences: ["application/json", "application/octet-stream", "text/plain"])

    /// Why `headers` do not name one of `accepted` (nil when they do); a
    /// request without `Content-Type` passes only when `absentIsAccepted`.
    static func refusal(_ headers: HTTPFields, accepting accepted: BodyMediaType, absentIsAccepted: Bool) -> String? {
        guard let index = headers.firstIndex(where: { $0.name == .contentType }) else {
            return absentIsAccepted ? nil : "the request names no Content-Type; the body is read as \(accepted.wanted)"
        }
        guard !headers[headers.index(after: index)...].contains(where: { $0.name == .contentType }) else {
            return "the request has more than one Content-Type field: it reads two ways"
        }
        let line = headers[index].value
        if accepted.essences.contains(where: { essence(of: line, is: $0) }) { return nil }
        // Named as sent: Unicode case mapping would turn a lookalike into the ASCII it imitates.
        return "the body is \(HeaderValue.encode(String(trimmedEssence(line).prefix(100)))); this route reads \(accepted.wanted)"
    }

    /// The accepted essences as a refusal names them.
    var wanted: String { essences.joined(separator: ", ") }

    /// Whether the field value's essence is `expected` (lower-case ASCII), ignoring ASCII case.
    private static func essence(of value: String, is expected: String) -> Bool {
        let bytes = value.utf8.span
        let range = essenceRange(bytes)
        guard range.count == expected.utf8.count else { return false }
        var index = range.lowerBound
        for want in expected.utf8 {
            let byte = bytes[index]
            guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == want else { return false }
            index += 1
        }
        return true
    }

    /// The essence as written, for a refusal's message.
    private static func trimmedEssence(_ value: String) -> String {
        let bytes = Array(value.utf8)
        return String(decoding: bytes[essenceRange(bytes.span)], as: UTF8.self)
    }

    /// Where the value's bytes before any `;` are, without the spaces and tabs around them.
    private static func essenceRange(_ bytes: Span<UInt8>) -> Range<Int> {
        var end = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: ";") { end += 1 }
        var start = 0
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return start..<end
    }
}
