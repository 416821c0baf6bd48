/// One paste taken apart by lines, before any token is read from it: the URL
/// the edge was asked for (a URL line), the name=value pairs every carrier
/// holds (the URL's query, `Cookie:` and `Set-Cookie:` lines, a
/// `CTA-Common-Access-Token:` line), and a bare token line
/// (docs/DESIGN.md#reading-cdn-tokens-back).
///
/// Strict where two readings could exist: one URL and one bare token per
/// paste at most, a header line that carries no CDN token refused by name
/// rather than skipped, and bounded (``maximumBytes``, ``maximumCookies``).
public struct CDNPaste: Sendable, Hashable {
    /// One name=value pair as pasted, value as written (never percent-decoded:
    /// an edge compares the bytes it receives, and so does the reader).
    public struct Pair: Sendable, Hashable {
        public var name: String
        public var value: String
        public var carrier: CDNCarrier
        /// A `Set-Cookie` line's attributes after the pair (`Path=/hls/; Secure`), as written.
        public var attributes: String?
    }

    /// The largest paste read: far above a URL (8 KiB), a CAT (8 KiB as
    /// hex is 16 KiB) or a browser's cookie header.
    public static let maximumBytes = 64 * 1024
    /// The most cookies read from one paste (browsers send about 50 per host).
    public static let maximumCookies = 64

    /// The URL line, when there is one.
    public let url: CDNURL?
    /// Every pair, in the order pasted.
    public let pairs: [Pair]
    /// The bare token line, when there is one (white space trimmed).
    public let bare: String?

    /// The header a CAT travels in, lower case (header names are case-insensitive).
    static let catHeader = "cta-common-access-token"

    /// Reads `text`: lines (CR LF or LF) of a URL, `Cookie:`, `Set-Cookie:`,
    /// a CAT header, or a bare token; blank lines are skipped. Throws
    /// `INVALID_TOKEN_FORMAT` naming the line that breaks a rule.
    public init(text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumBytes else {
            throw .format("a paste of \(bytes.count) bytes; at most \(Self.maximumBytes) are read")
        }
        var url: CDNURL? = nil
        var pairs: [Pair] = []
        var bare: String? = nil
        var cookies = 0
        for (index, line) in Self.lines(of: bytes).enumerated() {
            let number = index + 1
            switch Self.classify(line) {
            case .blank:
                continue
            case .url:
                guard url == nil else { throw .format("two URLs in one paste (line \(number)); paste one request at a time") }
                do { url = try CDNURL(parsing: String(decoding: line, as: UTF8.self)) } catch {
                    // A path refused by the one reading stays INVALID_URL: the token may be fine, the request is not.
                    throw CDNRefusal(error.status, "the URL on line \(number): \(error.reason)")
                }
                pairs += CloudFrontSignedURL.queryPairs(of: url!).map { Pair(name: $0.name, value: $0.value, carrier: .query) }
            case .header(let name, let value):
                switch name.lowercased() {
                case "cookie":
                    let found = try Self.cookiePairs(value, line: number)
                    cookies += found.count
                    pairs += found
                case "set-cookie":
                    cookies += 1
                    pairs.append(try Self.setCookiePair(value, line: number))
                case Self.catHeader:
                    guard !value.isEmpty else { throw .format("the \(CDNProfile.catHeader) line \(number) is empty") }
                    pairs.append(Pair(name: CDNProfile.catHeader, value: value, carrier: .header))
                default:
                    throw .format(
                        "the header line '\(EdgeAuthToken.excerpt(name.utf8))' (line \(number)) carries no CDN token; "
                            + "paste a Cookie, Set-Cookie or \(CDNProfile.catHeader) line"
                    )
                }
                guard cookies <= Self.maximumCookies else { throw .format("more than \(Self.maximumCookies) cookies in one paste") }
            case .bare(let token):
                guard bare == nil else { throw .format("two bare tokens in one paste (line \(number)); paste one at a time") }
                bare = token
            }
        }
        self.url = url
        self.pairs = pairs
        self.bare = bare
    }

    /// What a line is, by its form alone.
    enum LineForm: Equatable {
        case blank
        case url
        /// `Name: value`, the name a header field name (RFC 9110 §5.1), the value trimmed.
        case header(name: String, value: String)
        case bare(String)
    }

    static func classify(_ line: ArraySlice<UInt8>) -> LineForm {
        let trimmed = Array(Array(line).trimmingASCIIWhitespace())
        guard !trimmed.isEmpty else { return .blank }
        let text = String(decoding: trimmed, as: UTF8.self)
        let lowered = text.prefix(8).lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return .url }
        if let colon = trimmed.firstIndex(of: UInt8(ascii: ":")), colon > 0, trimmed[..<colon].allSatisfy(Self.isHeaderNameByte) {
            let value = Array(Array(trimmed[(colon + 1)...]).trimmingASCIIWhitespace())
            return .header(name: String(decoding: trimmed[..<colon], as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        return .bare(text)
    }

    /// RFC 9110 §5.6.2 tchar: what a header field name is made of. `=`, `~`
    /// and `/` are not, so no EdgeAuth token or URL reads as a header line.
    static func isHeaderNameByte(_ byte: UInt8) -> Bool {
        byte.isASCIILetterOrDigit || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// The lines of `bytes`, split on LF (a CR before it is white space, trimmed later).
    static func lines(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    }

    /// A `Cookie:` line's value: `name=value` pairs separated by `;` (RFC 6265
    /// §4.2.1), spaces around them skipped, a value in double quotes unquoted.
    static func cookiePairs(_ text: String, line: Int) throws(CDNRefusal) -> [Pair] {
        var pairs: [Pair] = []
        for piece in text.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
            let trimmed = Array(piece).trimmingASCIIWhitespace()
            if trimmed.isEmpty { continue }
            guard pairs.count < maximumCookies else { throw .format("more than \(maximumCookies) cookies in one paste") }
            pairs.append(try cookiePair(trimmed, carrier: .cookie, line: line))
        }
        guard !pairs.isEmpty else { throw .format("the Cookie line \(line) holds no cookie") }
        return pairs
    }

    /// A `Set-Cookie:` line's value: the pair, then attributes (kept as written).
    static func setCookiePair(_ text: String, line: Int) throws(CDNRefusal) -> Pair {
        let bytes = Array(text.utf8)
        let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        var pair = try cookiePair(Array(bytes[..<end]).trimmingASCIIWhitespace(), carrier: .setCookie, line: line)
        if end < bytes.endIndex {
            let attributes = Array(bytes[(end + 1)...]).trimmingASCIIWhitespace()
            if !attributes.isEmpty { pair.attributes = String(decoding: attributes, as: UTF8.self) }
        }
        return pair
    }

    private static func cookiePair(_ bytes: ArraySlice<UInt8>, carrier: CDNCarrier, line: Int) throws(CDNRefusal) -> Pair {
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")), equals > bytes.startIndex else {
            throw .format("a cookie without a name and '=' on line \(line): '\(EdgeAuthToken.excerpt(bytes))'")
        }
        var value = bytes[(equals + 1)...]
        if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") { value = value.dropFirst().dropLast() }
        return Pair(name: String(decoding: bytes[..<equals], as: UTF8.self), value: String(decoding: value, as: UTF8.self), carrier: carrier)
    }
}
