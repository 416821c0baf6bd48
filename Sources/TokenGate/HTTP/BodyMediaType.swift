import HTTPTypes

/// The media type a request names for its body, judged against what a route
/// reads (docs/openapi.yaml declares the same): the `Content-Type` essence
/// before any `;` parameter, compared without case (RFC 9110 §8.3.1). A body
/// of another type is 415, never read as the route's own: a form or a text
/// body that happens to parse as JSON is not an exchange.
enum BodyMediaType {
    /// `/v1/playback`: JSON only, named.
    static let json: Set<String> = ["application/json"]
    /// `/v1/verify` and `/v1/inspect`: tokens as text, a vendor's JSON response, or bytes.
    static let tokens: Set<String> = ["text/plain", "application/json", "application/octet-stream"]

    /// Why `headers` do not name one of `accepted` (nil when they do); a
    /// request without `Content-Type` passes only when `absentIsAccepted`.
    static func refusal(_ headers: HTTPFields, accepting accepted: Set<String>, absentIsAccepted: Bool) -> String? {
        let lines = headers[values: .contentType]
        let wanted = accepted.sorted().joined(separator: ", ")
        guard let line = lines.first else {
            return absentIsAccepted ? nil : "the request names no Content-Type; the body is read as \(wanted)"
        }
        guard lines.count == 1 else { return "the request has more than one Content-Type field: it reads two ways" }
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let essence = String(line.prefix { $0 != ";" }.drop(while: isSpace).reversed().drop(while: isSpace).reversed()).lowercased()
        guard accepted.contains(essence) else {
            return "the body is \(HeaderValue.encode(String(essence.prefix(100)))); this route reads \(wanted)"
        }
        return nil
    }
}
