import EntitlementTokens

/// Makes the Common Access Token the gate hands out (docs/DESIGN.md#the-cdn-exchange):
/// COSE_Mac0 with tag 17 for an HMAC key, COSE_Sign1 with tag 18 for a P-256
/// key, not wrapped in tag 61; `alg` in the protected header, `kid` (the
/// UTF-8 of the key's id) in the unprotected header; claims `iss`, `aud` when
/// the profile names an audience, `iat` =
/// now, `nbf` = now − leeway, `exp`, `cti` (16 random bytes), `catv` 1,
/// `catu` (`{3: {1: "<folder>/"}}` for a folder scope, `{3: {0: "<path>"}}`
/// for a URL scope), `catnip` when the IP is bound and `catr` when the
/// profile asks for renewal (docs/CDN.md#renewal-catr); base64url without padding.
public enum CommonAccessTokenIssuer {
    /// The token's text, with a fresh random `cti`.
    public static func issue(
        _ parameters: CDNIssueParameters,
        issuer: String,
        audience: String? = nil,
        renewal: CATRenewal? = nil,
        key: CATKey
    ) throws(CDNRefusal) -> String {
        try issue(parameters, issuer: issuer, audience: audience, renewal: renewal, key: key, cti: randomCTI())
    }

    /// A fresh `cti`: 16 random bytes.
    public static func randomCTI() -> [UInt8] { SystemRandom.bytes(16) }

    /// The token's text with a chosen `cti` (known-answer tests: with an HMAC
    /// key the bytes are then fully determined).
    package static func issue(
        _ parameters: CDNIssueParameters,
        issuer: String,
        audience: String? = nil,
        renewal: CATRenewal? = nil,
        key: CATKey,
        cti: [UInt8]
    ) throws(CDNRefusal) -> String {
        // Written straight to bytes, no CBOR tree and no COSEMessage made:
        // every item comes from a checked part (the times, the scope's path,
        // an address CDNIPAddress read, a CATRenewal read as the reader reads
        // `catr`). The tests read back what this writes and hold it to the
        // parameters (CATIssueTests.whatIsIssuedReadsBackAsItsClaims) and to
        // other tools' bytes (CATKnownAnswerTests, CATPeerTests).
        let payload = try payload(for: parameters, issuer: issuer, audience: audience, renewal: renewal, cti: cti)
        guard key.canIssue else { throw .format("\(key.label) is a public key; issuing a CAT needs the private key") }
        let structure = key.algorithm.structure
        let protectedHeaderBytes = COSEMessage.protectedHeaderBytes(algorithm: key.algorithm)
        let signed = COSEMessage.toBeAuthenticated(structure: structure, protectedHeaderBytes: protectedHeaderBytes, payload: payload)
        let message = COSEMessage.cbor(
            structure: structure,
            protectedHeaderBytes: protectedHeaderBytes,
            unprotectedHeader: unprotectedHeader(key),
            payload: payload,
            authenticationTag: try CATAuthentication.authenticate(signed, with: key)
        )
        return CATTextEncoding.base64url(message)
    }

    /// `kid` (the UTF-8 of the key's id) when the key has one.
    private static func unprotectedHeader(_ key: CATKey) -> [CBORMapEntry] {
        key.id.map { [CBORMapEntry(COSEMessage.keyIDLabel, .bytes(Array($0.utf8)))] } ?? []
    }

    /// The COSE message before it is written as text.
    package static func message(_ parameters: CDNIssueParameters, issuer: String, key: CATKey, cti: [UInt8]) throws(CDNRefusal) -> COSEMessage {
        try message(claims: try claims(for: parameters, issuer: issuer, cti: cti), key: key)
    }

    /// The COSE message of exactly `claims`, made with `key` as every token
    /// here is: for callers (tests of an origin) that need claims this
    /// issuer never writes.
    package static func message(claims: CommonAccessToken, key: CATKey) throws(CDNRefusal) -> COSEMessage {
        try message(payload: claims.cbor(), key: key)
    }

    /// The COSE message of a payload already written as CBOR.
    static func message(payload: [UInt8], key: CATKey) throws(CDNRefusal) -> COSEMessage {
        guard key.canIssue else { throw .format("\(key.label) is a public key; issuing a CAT needs the private key") }
        let unsigned = COSEMessage(
            structure: key.algorithm.structure,
            protectedHeader: [CBORMapEntry(COSEMessage.algorithmLabel, .integer(key.algorithm.rawValue))],
            unprotectedHeader: unprotectedHeader(key),
            payload: payload,
            authenticationTag: []
        )
        return unsigned.with(authenticationTag: try CATAuthentication.authenticate(unsigned, with: key))
    }

    /// The renewal `catr` asks for (docs/DESIGN.md#catr-renewal-at-the-origin):
    /// `token`'s claims in their order, with `cti` the given one (a one-use
    /// token renewed is a new one-use token), `iat` = `now` and `exp` = `now` +
    /// `catr`'s `expadd`; every other claim, `catr` included, as it was.
    /// `token` must have been verified: this signs whatever it is given.
    public static func renewal(of token: CommonAccessToken, now: Int64, key: CATKey, cti: [UInt8]) throws(CDNRefusal) -> String {
        guard let renewal = token.renewal else { throw .format("the CAT has no catr: nothing asks for a renewal") }
        let (expires, overflow) = now.addingReportingOverflow(renewal.expAdd)
        guard !overflow else { throw .format("catr expadd \(renewal.expAdd) from \(now) overflows") }
        let replaced: [(CATClaim, CBORValue)] = [(.iat, .integer(now)), (.exp, .integer(expires)), (.cti, .bytes(cti))]
        var claims: [CBORMapEntry] = token.claims.map { entry in
            guard let value = replaced.first(where: { entry.key == .integer($0.0.rawValue) })?.1 else { return entry }
            return CBORMapEntry(entry.key, value)
        }
        for (claim, value) in replaced where token.value(of: claim) == nil {
            claims.append(CBORMapEntry(.integer(claim.rawValue), value))
        }
        return CATTextEncoding.base64url(try message(claims: try CommonAccessToken(claims: claims), key: key).cbor())
    }

    /// The claims, in the order written: the payload ``issue(_:issuer:audience:renewal:key:)``
    /// writes, read back.
    public static func claims(
        for parameters: CDNIssueParameters,
        issuer: String,
        audience: String? = nil,
        renewal: CATRenewal? = nil,
        cti: [UInt8]
    ) throws(CDNRefusal) -> CommonAccessToken {
        try CommonAccessToken(cbor: try payload(for: parameters, issuer: issuer, audience: audience, renewal: renewal, cti: cti))
    }

    /// The claims map as CBOR, written item by item.
    static func payload(
        for parameters: CDNIssueParameters,
        issuer: String,
        audience: String?,
        renewal: CATRenewal?,
        cti: [UInt8]
    ) throws(CDNRefusal) -> [UInt8] {
        let (expires, late) = parameters.now.addingReportingOverflow(parameters.lifetime)
        let (notBefore, early) = parameters.now.subtractingReportingOverflow(parameters.leeway)
        guard !late, !early, parameters.lifetime > 0, parameters.leeway >= 0 else {
            throw .format("a CAT lifetime of \(parameters.lifetime) s and leeway of \(parameters.leeway) s from \(parameters.now)")
        }
        var address: CDNIPAddress? = nil
        if let clientIP = parameters.clientIP {
            guard let read = CDNIPAddress(clientIP) else {
                throw .format("the client IP \(CBORValue.text(clientIP).diagnostic()) is not an IP address")
            }
            address = read
        }
        let renewalValue = renewal?.claimValue
        if let renewalValue {
            // A renewal is built by any caller of the library, its names and
            // seconds unchecked: it must read as the reader reads `catr`.
            _ = try CATRenewal(claim: renewalValue)
        }
        let coveredPath = parameters.scope.coveredPath(of: parameters.url)
        let match: CATMatchType = parameters.scope == .folder ? .prefix : .exact

        var output: [UInt8] = []
        output.reserveCapacity(96 + issuer.utf8.count + (audience?.utf8.count ?? 0) + cti.count + coveredPath.utf8.count)
        let claimCount = 7 + (audience == nil ? 0 : 1) + (address == nil ? 0 : 1) + (renewalValue == nil ? 0 : 1)
        CBORValue.writeMapHead(count: claimCount, into: &output)
        func claim(_ claim: CATClaim) { CBORValue.writeInteger(claim.rawValue, into: &output) }
        claim(.iss)
        CBORValue.writeText(issuer, into: &output)
        // The edges that judge aud must be named, or RFC 8392 §3.1.3 has them refuse the token.
        if let audience {
            claim(.aud)
            CBORValue.writeText(audience, into: &output)
        }
        claim(.iat)
        CBORValue.writeInteger(parameters.now, into: &output)
        claim(.nbf)
        CBORValue.writeInteger(notBefore, into: &output)
        claim(.exp)
        CBORValue.writeInteger(expires, into: &output)
        claim(.cti)
        CBORValue.writeBytes(cti, into: &output)
        claim(.catv)
        CBORValue.writeInteger(1, into: &output)
        // catu: {path: {match: path}}
        claim(.catu)
        CBORValue.writeMapHead(count: 1, into: &output)
        CBORValue.writeInteger(CATURIComponent.path.rawValue, into: &output)
        CBORValue.writeMapHead(count: 1, into: &output)
        CBORValue.writeInteger(match.rawValue, into: &output)
        CBORValue.writeText(coveredPath, into: &output)
        if let address {
            claim(.catnip)
            CATNetworkRestriction.claimValue(binding: address).write(into: &output)
        }
        if let renewalValue {
            claim(.catr)
            renewalValue.write(into: &output)
        }
        return output
    }
}
