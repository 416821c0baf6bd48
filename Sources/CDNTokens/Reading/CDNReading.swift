import EntitlementTokens

/// A CDN token read back from what a support engineer pasted: its kind, the
/// carrier it was found in, the token itself (read by its kind's strict
/// reader), and the URL the paste names, if any. Unverified: ``verify(keys:facts:)``
/// and ``CDNProfile/verify(reading:facts:)`` judge it
/// (docs/DESIGN.md#reading-cdn-tokens-back).
public struct CDNReading: Sendable {
    /// The token, as its kind's reader read it.
    public enum Token: Sendable {
        case akamai(EdgeAuthToken)
        case cloudfront(CloudFrontToken)
        case cat(UnverifiedCommonAccessToken)
        case secureLink(SecureLinkToken)
    }

    public let kind: CDNTokenKind
    public let carrier: CDNCarrier
    /// The cookie or parameter name it travelled under (`__token__`, `cat`,
    /// `tg` for `tg_md5`, `CTA-Common-Access-Token`); nil for CloudFront's own
    /// names and for a bare token.
    public let tokenName: String?
    public let token: Token
    /// The URL line of the paste: the request, when `--url` does not say otherwise.
    public let url: CDNURL?
    /// Each `Set-Cookie` line's attributes (`Path=/hls/tnt/; Secure`), by cookie name.
    public let cookieAttributes: [CDNField]

    /// Reads `text` as one paste (``CDNPaste``), finding the token of `kind`
    /// (any kind when nil) under `tokenName` (a profile's `token-name`; the
    /// kind's own names when nil). Throws `INVALID_TOKEN_FORMAT` naming what
    /// could not be read, or the two tokens a paste held.
    public init(text: String, kind: CDNTokenKind? = nil, tokenName: String? = nil) throws(CDNRefusal) {
        try self.init(paste: CDNPaste(text: text), kind: kind, tokenName: tokenName)
    }

    public init(paste: CDNPaste, kind wanted: CDNTokenKind? = nil, tokenName wantedName: String? = nil) throws(CDNRefusal) {
        let found = try CDNTokenLocator.locate(paste, kind: wanted, tokenName: wantedName)
        let fields = found.pairs.map { CDNField($0.name, $0.value) }
        switch found.kind {
        case .akamai:
            token = .akamai(try EdgeAuthToken(parsing: found.bare ?? fields[0].value))
        case .cat:
            token = .cat(try UnverifiedCommonAccessToken(text: found.bare ?? fields[0].value))
        case .cloudfront:
            token = .cloudfront(found.carrier == .query ? try CloudFrontToken(queryPairs: fields) : try CloudFrontToken(cookiePairs: fields))
        case .nginxSecureLink:
            token = .secureLink(try SecureLinkToken(pairs: fields, tokenName: found.tokenName ?? SecureLinkToken.defaultTokenName))
        }
        kind = found.kind
        carrier = found.carrier
        self.tokenName = found.tokenName
        url = paste.url
        cookieAttributes = found.pairs.compactMap { pair in pair.attributes.map { CDNField(pair.name, $0) } }
    }

    /// Every field of the token, in the order its format writes them: the
    /// EdgeAuth fields, CloudFront's parameters then what a custom policy
    /// says, a CAT's message facts then one field per claim, secure_link's
    /// `md5` and `expires`. Raw text: whoever prints it escapes it.
    public var fields: [CDNField] {
        switch token {
        case .akamai(let token): token.fields
        case .cloudfront(let token): token.fields
        case .cat(let token): token.fields + [CDNField("encoding", token.textEncoding?.rawValue ?? "bytes")]
        case .secureLink(let token): token.fields
        }
    }

    /// A CAT in CBOR diagnostic notation with its header and claim names; nil for the other kinds.
    public var diagnostic: String? {
        if case .cat(let token) = token { return token.diagnostic }
        return nil
    }

    /// When the token stops being valid (seconds since 1970), when it says.
    public var expires: Int64? {
        switch token {
        case .akamai(let token): token.expires
        case .cloudfront(let token): token.expires
        case .cat(let token): token.token.expires
        case .secureLink(let token): token.expires
        }
    }

    /// When it starts to be valid (seconds since 1970), when it says.
    public var notBefore: Int64? {
        switch token {
        case .akamai(let token): return token.startTime
        case .cloudfront(let token):
            if case .custom(let policy, _) = token.policy { return policy.dateGreaterThan }
            return nil
        case .cat(let token): return token.token.notBefore
        case .secureLink: return nil
        }
    }
}
