import EntitlementTokens

/// An Akamai EdgeAuth 2.0 token, as the text after `__token__=` (or another
/// of ``carrierNames``): `[ip=…~][st=…~]exp=…[~acl=…][~id=…][~data=…]~hmac=…`.
///
/// A value with two doors: ``init(parsing:)`` reads the text strictly and
/// ``text`` writes it back, the same bytes. Making and verifying sit beside it
/// (``EdgeAuthIssuer``, ``verify(key:facts:algorithm:salt:)``).
///
/// The HMAC covers the fields written before `hmac` as they are written, so the
/// reader is strict where a lenient one would let two readings of one token
/// exist: each field once, in akamai-edgeauth's order (`ip`, `st`, `exp`, `acl`,
/// `id`, `data`, `hmac`), known names only (an unknown field would be signed
/// without meaning anything to us), no `~` inside a value, `!` only in `acl`,
/// `hmac` last, and at most ``maximumLength`` bytes
/// (docs/DESIGN.md#the-cdn-exchange).
public struct EdgeAuthToken: Sendable, Hashable {
    /// The cookie and query parameter names an Akamai edge reads a token
    /// from: `__token__` (akamai-edgeauth's default), and `hdnts`, `hdnea`,
    /// `hdntl` (the names Akamai's token settings offer for segment, edge
    /// authorization and session tokens).
    public static let carrierNames = ["__token__", "hdnts", "hdnea", "hdntl"]

    /// The longest token read or made.
    public static let maximumLength = 4096

    /// The viewer's IP address as written (early-escaped when the maker escaped early).
    public let ip: String?
    /// When the token starts to be valid, in seconds since 1970.
    public let startTime: Int64?
    /// When it stops being valid, in seconds since 1970.
    public let expires: Int64
    /// The paths it covers (an ACL-form token); nil for a URL-form token,
    /// whose URL is signed but not written.
    public let acl: [EdgeAuthACL]?
    /// The session id (`id`), as written.
    public let sessionID: String?
    /// Opaque data (`data`), as written.
    public let data: String?
    /// The MAC, `hmac`'s lower-case hex decoded.
    public let hmac: [UInt8]

    /// The field names in the one order they are written.
    static let fieldOrder = ["ip", "st", "exp", "acl", "id", "data", "hmac"]

    /// Reads the token text. Throws `INVALID_TOKEN_FORMAT` naming the field
    /// that breaks a rule.
    public init(parsing text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else {
            throw .format("an EdgeAuth token of \(bytes.count) bytes (1 to \(Self.maximumLength))")
        }
        // Printable ASCII without the space: what a cookie value or a query
        // parameter carries unescaped (RFC 6265 §4.1.1 is stricter still).
        if let bad = bytes.firstIndex(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            throw .format("an EdgeAuth token with a space, a control character or a non-ASCII byte at offset \(bad)")
        }
        // One slot per field, in the written order (`fieldOrder`).
        var values = [String?](repeating: nil, count: Self.fieldOrder.count)
        var lastOrder = -1
        for segment in bytes.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false) {
            guard let equals = segment.firstIndex(of: UInt8(ascii: "=")) else {
                throw .format("an EdgeAuth field without '=': '\(Self.excerpt(segment))'")
            }
            guard let order = Self.fieldOrder.firstIndex(where: { $0.utf8.elementsEqual(segment[..<equals]) }) else {
                throw .format("an unknown EdgeAuth field '\(Self.excerpt(segment[..<equals]))': it would be signed without being understood")
            }
            let name = Self.fieldOrder[order]
            guard values[order] == nil else { throw .format("the EdgeAuth field '\(name)' appears twice") }
            guard lastOrder != Self.fieldOrder.count - 1 else { throw .format("the EdgeAuth field '\(name)' after hmac: hmac is the last field") }
            guard order > lastOrder else {
                throw .format(
                    "the EdgeAuth field '\(name)' after '\(Self.fieldOrder[lastOrder])': fields are written ip, st, exp, acl, id, data, hmac"
                )
            }
            let value = segment[(equals + 1)...]
            guard !value.isEmpty else { throw .format("the EdgeAuth field '\(name)' is empty") }
            if name != "acl", value.contains(UInt8(ascii: "!")) {
                throw .format("the EdgeAuth field '\(name)' holds '!', which only separates ACLs")
            }
            values[order] = String(decoding: value, as: UTF8.self)
            lastOrder = order
        }
        guard let hmacText = values[6] else { throw .format("an EdgeAuth token without hmac") }
        guard let expiresText = values[2] else { throw .format("an EdgeAuth token without exp") }
        ip = values[0]
        sessionID = values[4]
        data = values[5]
        startTime = try values[1].map { (text) throws(CDNRefusal) in try Self.seconds(text, field: "st") }
        expires = try Self.seconds(expiresText, field: "exp")
        // exp == st is a token valid for no second (akamai-edgeauth's generators write one for a window
        // of 0): well formed, and never valid (see the verifier); exp before st is malformed.
        if let startTime, expires < startTime {
            throw .format("an EdgeAuth token whose exp (\(expires)) is before its st (\(startTime))")
        }
        acl = try values[3].map { (text) throws(CDNRefusal) in
            var patterns: [EdgeAuthACL] = []
            for piece in text.utf8.split(separator: UInt8(ascii: "!"), omittingEmptySubsequences: false) {
                patterns.append(try EdgeAuthACL(String(decoding: piece, as: UTF8.self)))
            }
            return patterns
        }
        hmac = try Self.hmacBytes(hmacText)
    }

    /// The token text: the written fields in their order, joined by `~`.
    public var text: String {
        var bytes = signedFieldBytes()
        bytes += "~hmac=".utf8
        for byte in hmac {
            bytes.append(ByteRules.lowercaseHexDigit(byte >> 4))
            bytes.append(ByteRules.lowercaseHexDigit(byte & 0x0F))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every written field in order, `hmac` last, values as written.
    public var fields: [CDNField] { signedFields + [CDNField("hmac", ByteRules.lowercaseHex(hmac))] }

    /// True for a URL-form token: no `acl`, the URL signed but not written.
    public var isURLForm: Bool { acl == nil }

    /// The fields before `hmac`, which the HMAC covers.
    var signedFields: [CDNField] {
        var fields: [CDNField] = []
        if let ip { fields.append(CDNField("ip", ip)) }
        if let startTime { fields.append(CDNField("st", String(startTime))) }
        fields.append(CDNField("exp", String(expires)))
        if let acl { fields.append(CDNField("acl", acl.map(\.text).joined(separator: "!"))) }
        if let sessionID { fields.append(CDNField("id", sessionID)) }
        if let data { fields.append(CDNField("data", data)) }
        return fields
    }

    /// The fields before `hmac` as written, joined by `~`: written into one
    /// array (every exchange writes them twice, to sign and to hand out).
    func signedFieldBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + (acl?.reduce(0) { $0 + $1.text.utf8.count + 1 } ?? 0))
        func field(_ name: String, _ value: some Sequence<UInt8>) {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "~")) }
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: value)
        }
        if let ip { field("ip", ip.utf8) }
        if let startTime { field("st", String(startTime).utf8) }
        field("exp", String(expires).utf8)
        if let acl {
            field("acl", acl[0].text.utf8)
            for pattern in acl.dropFirst() {
                bytes.append(UInt8(ascii: "!"))
                bytes.append(contentsOf: pattern.text.utf8)
            }
        }
        if let sessionID { field("id", sessionID.utf8) }
        if let data { field("data", data.utf8) }
        return bytes
    }

    /// The bytes the HMAC covers: the written fields before `hmac`, then
    /// `url=<url>` (URL form, the URL as the maker signed it) and
    /// `salt=<salt>` when the property has one, all joined by `~`.
    public func signedBytes(url: String?, salt: String?) -> [UInt8] {
        signedBytes(urlBytes: url.map { Array($0.utf8) }, salt: salt)
    }

    /// The same, with the URL as bytes (a percent-decoded path need not be UTF-8).
    func signedBytes(urlBytes: [UInt8]?, salt: String?) -> [UInt8] {
        Self.signedBytes(fieldBytes: signedFieldBytes(), urlBytes: urlBytes, salt: salt)
    }

    /// The same from the written fields' bytes (``signedFieldBytes()``), which the maker also measures.
    static func signedBytes(fieldBytes: [UInt8], urlBytes: [UInt8]?, salt: String?) -> [UInt8] {
        var bytes = fieldBytes
        if let urlBytes { bytes += Array("~url=".utf8) + urlBytes }
        if let salt, !salt.isEmpty { bytes += Array("~salt=".utf8) + Array(salt.utf8) }
        return bytes
    }

    /// The token made from its fields and a MAC computed elsewhere (the maker).
    init(ip: String?, startTime: Int64?, expires: Int64, acl: [EdgeAuthACL]?, sessionID: String?, data: String?, hmac: [UInt8]) {
        self.ip = ip
        self.startTime = startTime
        self.expires = expires
        self.acl = acl
        self.sessionID = sessionID
        self.data = data
        self.hmac = hmac
    }

    /// Seconds since 1970 as akamai-edgeauth writes them: decimal digits, no
    /// sign, no leading zero, greater than zero, within 64 bits.
    static func seconds(_ text: String, field: String) throws(CDNRefusal) -> Int64 {
        let digits = Array(text.utf8)
        guard digits.count <= 19, digits.first != UInt8(ascii: "0"), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int64(text), value > 0
        else {
            throw .format("the EdgeAuth field '\(field)' is not a positive number of seconds without a leading zero")
        }
        return value
    }

    /// `hmac` is lower-case hex of an HMAC-SHA256, -SHA1 or -MD5 (64, 40 or 32 digits).
    static func hmacBytes(_ text: String) throws(CDNRefusal) -> [UInt8] {
        let digits = Array(text.utf8)
        let lengths = EdgeAuthAlgorithm.allCases.map(\.hmacHexLength)
        guard lengths.contains(digits.count) else {
            throw .format("the EdgeAuth field 'hmac' has \(digits.count) characters (64, 40 or 32 hex digits)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = ByteRules.hexValue(digits[index]), let low = ByteRules.hexValue(digits[index + 1]),
                !(digits[index] >= 0x41 && digits[index] <= 0x46), !(digits[index + 1] >= 0x41 && digits[index + 1] <= 0x46)
            else {
                throw .format("the EdgeAuth field 'hmac' is not lower-case hex")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// At most 40 bytes of hostile text, for a message (whoever prints it escapes it).
    static func excerpt(_ bytes: some Collection<UInt8>) -> String {
        let head = bytes.prefix(40)
        return String(decoding: head, as: UTF8.self) + (bytes.count > 40 ? "…" : "")
    }
}
