import EntitlementTokens

/// A Common Access Token as read, before any key has looked at it: its COSE
/// message and the claims in its payload. Nothing here is trusted until
/// ``verify(keys:facts:expectedIssuer:expectedAudience:)`` returns a
/// ``VerifiedCommonAccessToken``.
public struct UnverifiedCommonAccessToken: Sendable, Hashable {
    public let message: COSEMessage
    public let token: CommonAccessToken
    /// How the text was written; nil when read from bytes.
    public let textEncoding: CATTextEncoding?

    /// Reads a CAT from its text form (base64url, Base64 or hex).
    public init(text: String) throws(CDNRefusal) {
        let (bytes, encoding) = try CATTextEncoding.decode(text)
        try self.init(cbor: bytes, textEncoding: encoding)
    }

    /// Reads a CAT from the COSE message's bytes (at most 8 KiB).
    public init(cbor bytes: [UInt8]) throws(CDNRefusal) {
        try self.init(cbor: bytes, textEncoding: nil)
    }

    private init(cbor bytes: [UInt8], textEncoding: CATTextEncoding?) throws(CDNRefusal) {
        message = try COSEMessage(cbor: bytes)
        token = try CommonAccessToken(cbor: message.payload)
        self.textEncoding = textEncoding
    }

    init(message: COSEMessage, token: CommonAccessToken) {
        self.message = message
        self.token = token
        textEncoding = nil
    }

    /// The message in diagnostic notation, headers and claims named:
    /// `17([<<{1 /alg/: 5}>>, {4 /kid/: h'…'}, <<{1 /iss/: "tnt", …}>>, h'…'])`.
    /// A byte string is shown as embedded CBOR (`<<…>>`) only when it is the
    /// preferred encoding of what it holds, otherwise as `h'…'` (node-cat
    /// writes `b9 0001` for a one-pair map), so the notation never misstates
    /// the bytes; ``CommonAccessToken/diagnostic`` shows the claims either way.
    public var diagnostic: String {
        let headerLabels = CBORDiagnosticLabels(names: [1: "alg", 2: "crit", 3: "content type", 4: "kid", 5: "IV", 6: "partial IV"])
        func embedded(_ bytes: [UInt8], _ value: CBORValue?, _ labels: CBORDiagnosticLabels) -> String {
            guard let value else { return "h'\(ByteRules.lowercaseHex(bytes))'" }
            let text = value.diagnostic(labels: labels)
            return value.cbor() == bytes ? "<<\(text)>>" : "h'\(ByteRules.lowercaseHex(bytes))'"
        }
        let protected =
            message.protectedHeaderBytes.isEmpty
            ? "h''"
            : embedded(message.protectedHeaderBytes, .map(message.protectedHeader), headerLabels)
        let claims = embedded(message.payload, try? CBORValue(cbor: message.payload), CATClaim.diagnosticLabels)
        var text =
            "[\(protected), \(CBORValue.map(message.unprotectedHeader).diagnostic(labels: headerLabels)), \(claims), h'\(ByteRules.lowercaseHex(message.authenticationTag))']"
        if message.hasCOSETag { text = "\(message.structure.tag)(\(text))" }
        if message.hasCWTTag { text = "61(\(text))" }
        return text
    }

    /// The message's facts, then one field per claim: `structure`, `alg`,
    /// `kid` (as text when it is UTF-8, else hex), `tags`, then ``CommonAccessToken/fields``.
    public var fields: [CDNField] {
        var fields = [CDNField("structure", message.structure.rawValue)]
        if let algorithm = message.protectedAlgorithm { fields.append(CDNField("alg", COSEAlgorithm.describe(algorithm))) }
        if let algorithm = message.unprotectedAlgorithm { fields.append(CDNField("alg (unprotected)", COSEAlgorithm.describe(algorithm))) }
        if let kid = message.keyID {
            fields.append(CDNField("kid", String(validating: kid, as: UTF8.self) ?? ByteRules.lowercaseHex(kid)))
        }
        var tags = [String]()
        if message.hasCWTTag { tags.append("61 (CWT)") }
        if message.hasCOSETag { tags.append("\(message.structure.tag) (\(message.structure.rawValue))") }
        fields.append(CDNField("tags", tags.isEmpty ? "none" : tags.joined(separator: ", ")))
        return fields + token.fields
    }
}
