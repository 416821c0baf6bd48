/// A software statement (docs/DESIGN.md#software-statements; RFC 7591 §2.3): a JWS in compact
/// serialization whose payload is a JSON object of claims identifying an app
/// (`software_id`, `software_version`, `iss`, `sub`, `aud`, `iat`, `exp`,
/// `jti`, and whatever else the issuer adds, kept in order).
///
/// Decoding reads the structure only; whether the header's `alg` is allowed,
/// which key signed it and whether it is in date are the verifier's questions
/// (``SoftwareStatementVerifier``), so `inspect` can show a statement that
/// verification refuses, and say why.
public struct SoftwareStatement: Sendable, Hashable {
    /// The JWS compact text as read (three Base64url parts joined by `.`).
    public let compact: String
    /// The JOSE header, members in order.
    public let header: JSONValue
    /// The claims, members in order.
    public let claims: JSONValue
    /// The signature bytes (raw `r‖s` for ECDSA).
    public let signature: [UInt8]
    /// Where the signature part starts in ``compact``: the signing input is everything before its `.`.
    let signingInputCount: Int

    /// What the signature covers (RFC 7515 §5.2): the header and payload parts
    /// as written, joined by `.`.
    public var signingInput: [UInt8] { Array(compact.utf8.prefix(signingInputCount)) }

    /// The header's `alg` text, as written (nil when absent or not a string).
    public var algorithmName: String? { header["alg"]?.stringValue }
    /// The header's `kid`.
    public var keyID: String? { header["kid"]?.stringValue }
    /// The header's `typ`.
    public var type: String? { header["typ"]?.stringValue }

    public var softwareID: String? { claims["software_id"]?.stringValue }
    public var softwareVersion: String? { claims["software_version"]?.stringValue }
    public var issuer: String? { claims["iss"]?.stringValue }
    public var subject: String? { claims["sub"]?.stringValue }
    public var jwtID: String? { claims["jti"]?.stringValue }
    /// `aud` as a list: a string is one audience (RFC 7519 §4.1.3).
    public var audience: [String] {
        switch claims["aud"] {
        case .string(let one): [one]
        case .array(let many): many.compactMap(\.stringValue)
        default: []
        }
    }
    /// `exp`, `iat` and `nbf` as times (NumericDate: seconds, a fraction ignored).
    public var expiresAt: TokenTimestamp? { Self.numericDate(claims["exp"]) }
    public var issuedAt: TokenTimestamp? { Self.numericDate(claims["iat"]) }
    public var notBefore: TokenTimestamp? { Self.numericDate(claims["nbf"]) }

    /// Header members that would change how the statement must be read, and
    /// that this reader refuses rather than ignores (RFC 7515 §4.1.11: an
    /// unknown `crit` must be refused; RFC 7797 `b64: false` changes the signing input).
    static let refusedHeaderMembers = ["crit", "b64"]

    /// Decodes a JWS compact string (already unwrapped from whatever it was pasted in).
    ///
    /// - Throws: ``TokenError`` `notJWS` when it is not three canonical
    ///   Base64url parts, `invalidJSON` / `ambiguousEnvelope` / `jsonTooDeep` /
    ///   `jsonLimitExceeded` from the JSON reader for the header and claims,
    ///   `invalidFieldValue` for a refused header member (`crit`, `b64`), a
    ///   missing `alg`, or a claim of the wrong type (`exp`, `iat`, `nbf` not
    ///   numbers, `aud` neither a string nor an array of strings).
    public init(compact bytes: [UInt8], limits: JSONDocumentLimits = .init()) throws(TokenError) {
        guard bytes.count <= limits.maxBytes else {
            throw TokenError(.inputTooLarge, stage: .transport, "a JWS of \(bytes.count) bytes, over the limit of \(limits.maxBytes)")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw TokenError(
                .notJWS,
                stage: .transport,
                "a JWS compact serialization has 3 parts separated by '.', this has \(parts.count)"
            )
        }
        let names = ["header", "payload", "signature"]
        var decoded: [[UInt8]] = []
        for (index, part) in parts.enumerated() {
            guard let bytes = Base64URL.decode(part) else {
                let offset = part.startIndex
                throw TokenError(
                    .notJWS,
                    stage: .transport,
                    "the \(names[index]) part is not canonical unpadded Base64url",
                    at: SourceLocation(byteOffset: offset)
                )
            }
            decoded.append(bytes)
        }
        let header = try Self.readPart(decoded[0], name: "header", limits: limits)
        let claims = try Self.readPart(decoded[1], name: "claims", limits: limits)
        for name in Self.refusedHeaderMembers where header[name] != nil {
            throw TokenError(
                .invalidFieldValue,
                stage: .model,
                "the JOSE header has '\(name)', which this reader refuses (it would change how the statement is read)"
            )
        }
        guard header["alg"]?.stringValue != nil else {
            throw TokenError(.missingField, stage: .model, "the JOSE header has no 'alg' string")
        }
        for name in ["exp", "iat", "nbf"] {
            if let value = claims[name], Self.numericDate(value) == nil {
                throw TokenError(.invalidFieldValue, stage: .model, "claim '\(name)' is not a NumericDate (seconds since 1970)")
            }
        }
        switch claims["aud"] {
        case nil, .string: break
        case .array(let list) where list.allSatisfy({ $0.stringValue != nil }): break
        default:
            throw TokenError(.invalidFieldValue, stage: .model, "claim 'aud' is neither a string nor an array of strings")
        }
        compact = String(decoding: bytes, as: UTF8.self)
        self.header = header
        self.claims = claims
        signature = decoded[2]
        signingInputCount = parts[0].count + 1 + parts[1].count
    }

    private static func readPart(_ bytes: [UInt8], name: String, limits: JSONDocumentLimits) throws(TokenError) -> JSONValue {
        do {
            return try JSONValue.readObject(bytes, limits: limits)
        } catch {
            var error = error
            error.message = "the \(name): \(error.message)"
            throw error
        }
    }

    /// A NumericDate (RFC 7519 §2): a JSON number of seconds; a fraction is dropped.
    static func numericDate(_ value: JSONValue?) -> TokenTimestamp? {
        // An exponent form (1.7e9) is refused rather than evaluated: no issuer writes one.
        guard case .number(let text) = value, !text.contains(where: { $0 == "e" || $0 == "E" }) else { return nil }
        guard let seconds = Int64(text.prefix { $0 != "." }) else { return nil }
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        return TokenTimestamp(millisecondsSince1970: milliseconds)
    }
}
