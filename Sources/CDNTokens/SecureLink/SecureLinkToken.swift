import EntitlementTokens

/// An nginx `secure_link` token: the MD5 of the profile's expression and the
/// time it expires, carried as the query parameters `md5` and `expires`, or
/// as the cookies `<token-name>_md5` and `<token-name>_expires` (default
/// `tg_md5`, `tg_expires`), which the edge reads as `$arg_md5,$arg_expires`
/// or `$cookie_tg_md5,$cookie_tg_expires`.
///
/// MD5, because that is all nginx has built in: this format is for nginx edge
/// caches only (docs/DESIGN.md#the-cdn-exchange).
public struct SecureLinkToken: Sendable, Hashable {
    /// The query parameter names.
    public static let md5Name = "md5"
    public static let expiresName = "expires"
    /// The cookie names' prefix when the profile sets no `token-name`.
    public static let defaultTokenName = "tg"

    /// The 16 bytes of the MD5.
    public let md5: [UInt8]
    /// Seconds since 1970 after which the edge refuses the link.
    public let expires: Int64

    init(md5: [UInt8], expires: Int64) {
        precondition(md5.count == 16)
        self.md5 = md5
        self.expires = expires
    }

    /// Reads the two values as an edge receives them: the MD5 as Base64url
    /// (22 characters, or 24 ending `==`: nginx reads both; `+` and `/` are
    /// not its alphabet), with unused trailing bits zero so one token has one
    /// text; `expires` as decimal seconds, positive, no sign, no leading zero
    /// (the edge hashes the text it receives, so `0123` would not be `123`).
    public init(md5 md5Text: String, expires expiresText: String) throws(CDNRefusal) {
        let text = Array(md5Text.utf8)
        let unpadded = text.count == 24 && text.suffix(2) == [UInt8(ascii: "="), UInt8(ascii: "=")] ? Array(text.prefix(22)) : text
        guard unpadded.count == 22, unpadded.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }),
            let decoded = try? Base64.decode(unpadded, whitespace: .lineBreaks).bytes, decoded.count == 16
        else {
            throw .format("the secure_link md5 is not 22 Base64url characters (an MD5)")
        }
        guard Base64.encode(decoded, alphabet: .url, padded: false).utf8.elementsEqual(unpadded) else {
            throw .format("the secure_link md5 is not written canonically (its last character's unused bits are not zero)")
        }
        let digits = Array(expiresText.utf8)
        guard !digits.isEmpty, digits.count <= 19, digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let expires = Int64(expiresText)
        else {
            throw .format("the secure_link expires is not a positive number of seconds without a leading zero")
        }
        self.init(md5: decoded, expires: expires)
    }

    /// Finds the token among a query's parameters or a request's cookies:
    /// `md5` and `expires`, or `<tokenName>_md5` and `<tokenName>_expires`.
    /// Other names are left alone (a query has its own); a name given twice,
    /// or a half of the pair missing, is refused.
    public init(pairs: [CDNField], tokenName: String = defaultTokenName) throws(CDNRefusal) {
        try Self.checkTokenName(tokenName)
        let carriers = [(Self.md5Name, Self.expiresName), (tokenName + "_md5", tokenName + "_expires")]
        for (md5Name, expiresName) in carriers {
            let md5Values = pairs.filter { $0.name == md5Name }
            let expiresValues = pairs.filter { $0.name == expiresName }
            if md5Values.isEmpty && expiresValues.isEmpty { continue }
            guard md5Values.count <= 1, expiresValues.count <= 1 else {
                throw .format("the secure_link \(md5Values.count > 1 ? md5Name : expiresName) is given more than once")
            }
            guard let md5 = md5Values.first, let expires = expiresValues.first else {
                throw .format("the secure_link \(md5Values.isEmpty ? md5Name : expiresName) is missing")
            }
            try self.init(md5: md5.value, expires: expires.value)
            return
        }
        throw .format("no secure_link \(Self.md5Name) and \(Self.expiresName), nor \(tokenName)_md5 and \(tokenName)_expires")
    }

    /// The MD5 as nginx reads it: Base64url without padding.
    public var md5Text: String { Base64.encode(md5, alphabet: .url, padded: false) }

    /// `md5` and `expires`, as the query carries them.
    public var fields: [CDNField] { [CDNField(Self.md5Name, md5Text), CDNField(Self.expiresName, String(expires))] }

    /// `md5=…&expires=…`, to append to a URL after `?` (neither value needs escaping).
    public var queryString: String { "\(Self.md5Name)=\(md5Text)&\(Self.expiresName)=\(expires)" }

    /// `url` with ``queryString`` appended (after its own query, if any): the
    /// link a query carrier hands out.
    public func link(to url: CDNURL) -> String {
        url.description + (url.query == nil ? "?" : "&") + queryString
    }

    /// The two cookies: `<tokenName>_md5` and `<tokenName>_expires`.
    public func cookies(tokenName: String = defaultTokenName) throws(CDNRefusal) -> [CDNField] {
        try Self.checkTokenName(tokenName)
        return [CDNField(tokenName + "_md5", md5Text), CDNField(tokenName + "_expires", String(expires))]
    }

    /// Letters, digits and `_`, 1 to 64 of them: nginx's `$cookie_<name>`
    /// variables cannot name a cookie with `-` or other characters.
    public static func checkTokenName(_ name: String) throws(CDNRefusal) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 64, bytes.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") }) else {
            throw .format(
                "the secure_link token name '\(name.prefix(64))' is not 1 to 64 letters, digits and '_' (nginx's $cookie_ names take no other)"
            )
        }
    }
}
