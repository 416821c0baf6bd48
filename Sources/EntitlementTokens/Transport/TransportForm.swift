/// How a token travelled: what had to be undone to reach its XML.
///
/// Layers apply outside-in: a REST envelope holds a string that may be
/// percent-encoded, which holds Base64 or raw XML.
public struct TransportForm: Sendable, Hashable, CustomStringConvertible {
    /// How the XML was encoded.
    public enum Encoding: String, Sendable, Hashable {
        case raw
        case base64
        case base64url
    }

    /// The REST response the token came in, if any.
    public enum Envelope: String, Sendable, Hashable {
        /// `{"serializedToken": …, "expires": …}`
        case restV1 = "rest-v1"
        /// `{"decisions": [{"token": {"serializedToken": …}}]}`
        case restV2 = "rest-v2"
    }

    /// The REST envelope, for a token from a REST JSON response.
    public var envelope: Envelope?
    /// The token was captured from a query string (`%XX` escapes), possibly after `name=`.
    public var percentEncoded: Bool
    /// The encoding under the percent-encoding, if any.
    public var encoding: Encoding

    /// A transport form.
    public init(envelope: Envelope? = nil, percentEncoded: Bool = false, encoding: Encoding) {
        self.envelope = envelope
        self.percentEncoded = percentEncoded
        self.encoding = encoding
    }

    /// For example `rest-v2+base64` or `percent+base64url`.
    public var description: String {
        // The common case, a bare encoding, without building a list (the CLI
        // asks once per token).
        if envelope == nil && !percentEncoded { return encoding.rawValue }
        var parts = [String]()
        if let envelope { parts.append(envelope.rawValue) }
        if percentEncoded { parts.append("percent") }
        parts.append(encoding.rawValue)
        return parts.joined(separator: "+")
    }
}

/// What the unsigned REST envelope said about a token. Shown, never trusted:
/// the token's own signed fields decide every check.
public struct RESTEnvelope: Sendable, Hashable {
    /// A member's value with its JSON type, so output can keep `"1458252511000"`
    /// (a string) apart from `1458252511000` (a number).
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        /// The number exactly as written (validated by the JSON grammar): no
        /// precision is lost to a conversion, and it can be written back as JSON.
        case number(String)
        case bool(Bool)
        case null

        /// The value as text (a string without quotes): how people read it.
        public var description: String {
            switch self {
            case .string(let text), .number(let text): text
            case .bool(let value): value ? "true" : "false"
            case .null: "null"
            }
        }
    }

    /// REST v1 or v2.
    public var version: TransportForm.Envelope
    /// Scalar members of the envelope (minus the token itself), sorted by key,
    /// e.g. `expires`, `resource`, `notAfter`.
    public var fields: [(key: String, value: Value)]

    /// An envelope with its scalar members.
    public init(version: TransportForm.Envelope, fields: [(key: String, value: Value)]) {
        self.version = version
        self.fields = fields
    }

    /// The value of the first member named `key`.
    public subscript(key: String) -> Value? {
        fields.first { $0.key == key }?.value
    }

    public static func == (lhs: RESTEnvelope, rhs: RESTEnvelope) -> Bool {
        lhs.version == rhs.version && lhs.fields.elementsEqual(rhs.fields, by: { $0 == $1 })
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        for field in fields {
            hasher.combine(field.key)
            hasher.combine(field.value)
        }
    }
}
