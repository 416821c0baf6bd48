import Foundation

/// Unwraps a REST JSON response into one record per token (SPEC §2, form 5).
///
/// v1: `{"serializedToken": "…", "expires": "…", …}` — one token.
/// v2: `{"decisions": [{"resource": …, "token": {"serializedToken": …, "notBefore": …, "notAfter": …}}]}`
/// — one token per decision. A decision without a token (a denial) becomes an
/// error record, so it is reported rather than silently dropped.
enum RESTDocument {
    struct Entry {
        var token: [UInt8]?
        var envelope: RESTEnvelope?
        var error: TokenError?
    }

    static func entries(from document: [UInt8]) -> [Entry] {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(document))
        } catch {
            return [Entry(error: TokenError(.invalidJSON, stage: .transport, "input starts with '{' but is not valid JSON"))]
        }
        guard case .object(let root) = value else {
            return [Entry(error: TokenError(.invalidJSON, stage: .transport, "the JSON document is not an object"))]
        }
        if let token = root["serializedToken"] {
            guard case .string(let text) = token else {
                return [Entry(error: TokenError(.jsonWithoutToken, stage: .transport, "serializedToken is not a string"))]
            }
            return [Entry(token: Array(text.utf8), envelope: RESTEnvelope(version: .restV1, fields: scalars(of: root, excluding: "serializedToken")))]
        }
        guard case .array(let decisions)? = root["decisions"] else {
            return [Entry(error: TokenError(.jsonWithoutToken, stage: .transport,
                                            "the JSON document has neither 'serializedToken' (REST v1) nor 'decisions' (REST v2)"))]
        }
        if decisions.isEmpty {
            return [Entry(error: TokenError(.jsonWithoutToken, stage: .transport, "the REST v2 document has no decisions"))]
        }
        return decisions.enumerated().map { index, element in
            guard case .object(let decision) = element else {
                return Entry(error: TokenError(.jsonWithoutToken, stage: .transport, "decision \(index + 1) is not an object"))
            }
            var fields = scalars(of: decision, excluding: nil)
            let tokenObject = decision["token"]?.object
            if let tokenObject { fields += scalars(of: tokenObject, excluding: "serializedToken") }
            fields.sort { $0.key < $1.key }
            let envelope = RESTEnvelope(version: .restV2, fields: fields)
            guard let serialized = tokenObject?["serializedToken"]?.string else {
                let resource = decision["resource"]?.scalarText.map { " for resource '\($0)'" } ?? ""
                var detail = decision["authorized"]?.scalarText.map { " (authorized: \($0))" } ?? ""
                if let error = decision["error"]?.object,
                   let message = (error["details"] ?? error["message"] ?? error["code"])?.scalarText {
                    detail += ": \(message)"
                }
                return Entry(envelope: envelope, error: TokenError(.jsonWithoutToken, stage: .transport,
                                                                   "decision \(index + 1)\(resource) carries no token\(detail)"))
            }
            return Entry(token: Array(serialized.utf8), envelope: envelope)
        }
    }

    /// String, number and boolean members, rendered as text and sorted by key.
    private static func scalars(of object: [String: JSONValue], excluding excluded: String?) -> [(key: String, value: String)] {
        object.compactMap { key, value -> (key: String, value: String)? in
            guard key != excluded, let text = value.scalarText else { return nil }
            return (key, text)
        }.sorted { $0.key < $1.key }
    }
}

/// Just enough JSON to read REST responses, keeping booleans and numbers apart.
enum JSONValue: Decodable {
    case string(String), integer(Int64), number(Double), bool(Bool), null
    case array([JSONValue]), object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    var string: String? { if case .string(let text) = self { text } else { nil } }
    var object: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }

    /// Strings, numbers and booleans as text; nil for anything structured.
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        case .null, .array, .object: nil
        }
    }
}
