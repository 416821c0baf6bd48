import EntitlementTokens

/// What is known about one pasted CDN token: where it came from, how it
/// read, and — given keys — its verdict. One value that every front end
/// renders, as ``TokenReport`` is for entitlement tokens
/// (docs/DESIGN.md#reading-cdn-tokens-back).
public struct CDNReadingReport: Sendable {
    /// 1-based index in the input stream.
    public let input: Int
    /// How the input is named (`argument 1`, a path, `stdin`).
    public let source: String
    /// The line of the input where the paste starts.
    public let line: Int
    /// The token as read; nil when it could not be.
    public let reading: CDNReading?
    /// Why it could not be read, or the verifier's refusal.
    public let refusal: CDNRefusal?
    /// What verified it (a key file, a profile), or nil when no key was given.
    public let verifiedWith: String?
    /// The URL it was checked against (`--url`, else the paste's own URL).
    public let url: CDNURL?

    public init(input: Int, source: String, line: Int, reading: CDNReading?, refusal: CDNRefusal?, verifiedWith: String?, url: CDNURL?) {
        self.input = input
        self.source = source
        self.line = line
        self.reading = reading
        self.refusal = refusal
        self.verifiedWith = verifiedWith
        self.url = url
    }

    /// The refusal's status; `VALID_TOKEN` when keys verified it; nil for a token read and not judged.
    public var status: CDNStatus? {
        if let refusal { return refusal.status }
        return verifiedWith == nil ? nil : .validToken
    }

    /// For people; may quote input (escape it before a terminal or a log).
    public var reason: String {
        if let refusal { return refusal.reason }
        guard let verifiedWith else { return "decoded; not verified (no key or profile given)" }
        let scope = url.map { "for \($0)" } ?? "(no URL given: the scope was not checked)"
        return "verified with \(verifiedWith) \(scope)"
    }

    /// `expires` or `notBefore` as ISO 8601 UTC.
    static func iso8601(_ seconds: Int64?) -> String? {
        guard let seconds else { return nil }
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? nil : TokenTimestamp(millisecondsSince1970: milliseconds)?.iso8601
    }

    /// The report as one JSON object: `input`, `source`, `line`, `status`,
    /// `reason`, `kind`, `carrier`, `tokenName`, `url`, `expiresAt`,
    /// `notBefore`, `fields` (each field's name and value as decoded, in the
    /// format's order), `cookieAttributes`, `diagnostic` (a CAT), `verifiedWith`
    /// and `renewalWindow` (a CAT with `catr` and `exp`: `{"opens", "closes"}`,
    /// the times `exp − deadline` and `exp`, docs/CDN.md#renewal-catr; else null).
    public var json: JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func object(_ fields: [CDNField]) -> JSONValue { .object(fields.map { JSONMember(name: $0.name, value: .string($0.value)) }) }
        let members: [(String, JSONValue)] = [
            ("input", .number(String(input))),
            ("source", .string(source)),
            ("line", .number(String(line))),
            ("status", text(status?.rawValue)),
            ("reason", .string(reason)),
            ("kind", text(reading?.kind.rawValue)),
            ("carrier", text(reading?.carrier.rawValue)),
            ("tokenName", text(reading?.tokenName)),
            ("url", text(url?.description)),
            ("expiresAt", text(Self.iso8601(reading?.expires))),
            ("notBefore", text(Self.iso8601(reading?.notBefore))),
            ("fields", reading.map { object($0.fields) } ?? .null),
            ("cookieAttributes", reading.map { object($0.cookieAttributes) } ?? .null),
            ("diagnostic", text(reading?.diagnostic)),
            ("verifiedWith", text(verifiedWith)),
            ("renewalWindow", renewalWindow),
        ]
        return .object(members.map { JSONMember(name: $0.0, value: $0.1) })
    }

    /// A CAT's `catr` window as `{"opens", "closes"}` (ISO 8601 UTC), or null.
    private var renewalWindow: JSONValue {
        guard case .cat(let cat) = reading?.token, let window = cat.token.renewalWindow,
            let opens = Self.iso8601(window.lowerBound), let closes = Self.iso8601(window.upperBound)
        else { return .null }
        return .object([JSONMember(name: "opens", value: .string(opens)), JSONMember(name: "closes", value: .string(closes))])
    }

    /// `reports` as one JSON array, one object a line: what `tokeninspect --format json`
    /// prints and `POST /v1/inspect` answers for CDN tokens.
    public static func jsonArray(_ reports: [CDNReadingReport]) -> [UInt8] {
        let objects = reports.map(\.json.encoded)
        return Array("[".utf8) + (objects.isEmpty ? [] : [0x0A] + Array(objects.joined(separator: Array(",\n".utf8))) + [0x0A])
            + Array("]\n".utf8)
    }
}
