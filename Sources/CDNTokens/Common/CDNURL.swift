/// An absolute `http` or `https` URL, read strictly: what a profile's
/// `resource` names, what a scope is cut from, and what a reader checks a
/// token against (`--url`). Kept as its parts, never re-encoded: an edge
/// compares the bytes it was asked for, so the reader does too.
public struct CDNURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lower case.
    public let scheme: String
    /// The host as written (a name, an IPv4 address, or `[…]` for IPv6), lower-cased.
    public let host: String
    /// The port when written (`:8443`), else nil.
    public let port: Int?
    /// The path, from its first `/`, percent escapes as written: what a
    /// signature covers (an EdgeAuth `url=`, nginx's `$uri` before decoding).
    public let path: String
    /// The path every scope is judged against: ``RequestPath``'s one reading
    /// of ``path`` (unreserved escapes decoded). A URL whose path that reading
    /// refuses is not a `CDNURL`.
    public let scopePath: String
    /// The query after `?`, as written, or nil when there is none.
    public let query: String?
    /// `scheme://host[:port]`.
    public let origin: String
    /// The folder the path lies in, ending in `/` (`/hls/tnt/` for `/hls/tnt/master.m3u8`),
    /// as the one reading of the path (``scopePath``) has it.
    public let folderPath: String
    /// The URL as written: ``origin`` followed by ``pathAndQuery``.
    public let description: String

    /// The longest URL read (an edge's own limits are about this size).
    public static let maximumLength = 8192

    public init(parsing text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else {
            throw .format("a URL of \(bytes.count) bytes (1 to \(Self.maximumLength))")
        }
        try Self.checkBytes(bytes[...])
        let scheme: String
        if Self.startsCaseInsensitively(bytes, with: "https://") {
            scheme = "https"
        } else if Self.startsCaseInsensitively(bytes, with: "http://") {
            scheme = "http"
        } else {
            throw .format("not an http:// or https:// URL")
        }
        let afterScheme = bytes[(scheme.utf8.count + 3)...]
        let authorityEnd = afterScheme.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterScheme.endIndex
        try self.init(scheme: scheme, authority: afterScheme[..<authorityEnd], rest: afterScheme[authorityEnd...], scopePath: nil)
    }

    /// `scheme://host` followed by `target`, read as ``init(parsing:)``
    /// reads that text, without joining it first: the gate's origin check
    /// builds its URL from what the proxy reported, and has already read the
    /// target's path the one way (`scopePath`: ``RequestPath/read(_:)`` of
    /// `target`, or nil to read it here). A host that is not a plain
    /// `host[:port]` (or `[v6][:port]`), or a target that is not a path, is
    /// read from the joined text, so both doors give the same URL or the
    /// same refusal.
    package init(scheme: String, host: String, target: Substring, scopePath: String?) throws(CDNRefusal) {
        let hostBytes = Array(host.utf8)
        let targetBytes = Array(target.utf8)
        let length = scheme.utf8.count + 3 + hostBytes.count + targetBytes.count
        guard scheme == "https" || scheme == "http", targetBytes.first == UInt8(ascii: "/"),
            !hostBytes.isEmpty, hostBytes.allSatisfy(\.isAuthorityByte), length <= Self.maximumLength
        else {
            try self.init(parsing: "\(scheme)://\(host)\(target)")
            return
        }
        try Self.checkBytes(targetBytes[...])
        try self.init(scheme: scheme, authority: hostBytes[...], rest: targetBytes[...], scopePath: scopePath)
    }

    /// The rest of either reading: `authority` (between `//` and the first
    /// `/` or `?`) and `rest` (from there), already checked by ``checkBytes(_:)``.
    private init(scheme: String, authority: ArraySlice<UInt8>, rest: ArraySlice<UInt8>, scopePath knownScopePath: String?) throws(CDNRefusal) {
        guard !authority.contains(UInt8(ascii: "@")) else { throw .format("a URL with user information ('@')") }
        var hostPart = authority[...]
        var port: Int? = nil
        if hostPart.first == UInt8(ascii: "[") {
            guard let close = hostPart.firstIndex(of: UInt8(ascii: "]")) else { throw .format("an IPv6 host without ']'") }
            let rest = hostPart[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { throw .format("text after an IPv6 host") }
                port = try Self.port(rest.dropFirst())
            }
            hostPart = hostPart[...close]
        } else if let colon = hostPart.firstIndex(of: UInt8(ascii: ":")) {
            port = try Self.port(hostPart[(colon + 1)...])
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty else { throw .format("a URL without a host") }
        guard hostPart.allSatisfy(\.isAuthorityByte) else {
            throw .format("a host with characters other than letters, digits, '-', '.' (or an IPv6 address)")
        }
        let queryStart = rest.firstIndex(of: UInt8(ascii: "?"))
        var path = String(decoding: rest[..<(queryStart ?? rest.endIndex)], as: UTF8.self)
        if path.isEmpty { path = "/" }
        let scopePath: String
        if let knownScopePath { scopePath = knownScopePath } else { scopePath = try RequestPath.read(path.utf8) }
        self.scopePath = scopePath
        self.scheme = scheme
        self.host = String(decoding: hostPart.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        self.port = port
        self.path = path
        self.query = queryStart.map { String(decoding: rest[($0 + 1)...], as: UTF8.self) }
        // Made once here: every issue of a profile's resource asks for them,
        // some twice (the cookie's `Path` and the ACL of the same token).
        let origin = "\(scheme)://\(self.host)" + (port.map { ":\($0)" } ?? "")
        self.origin = origin
        self.folderPath = scopePath.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(scopePath[...$0]) } ?? "/"
        self.description = origin + path + (self.query.map { "?\($0)" } ?? "")
    }

    /// Printable ASCII only, and no fragment: a space, a control or a
    /// non-ASCII byte would be escaped by one reader and not another, so
    /// two readings are possible.
    private static func checkBytes(_ bytes: ArraySlice<UInt8>) throws(CDNRefusal) {
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .format("a URL holds a space, a control character or a non-ASCII byte; percent-escape it")
        }
        guard !bytes.contains(UInt8(ascii: "#")) else { throw .format("a URL with a fragment ('#'): an edge never sees one") }
    }

    /// Whether `bytes` begin with `prefix` (lower-case ASCII), ASCII case aside.
    private static func startsCaseInsensitively(_ bytes: [UInt8], with prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for offset in 0..<prefix.utf8CodeUnitCount {
            let byte = bytes[offset]
            if (byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) != prefix.utf8Start[offset] { return false }
        }
        return true
    }

    private static func port(_ digits: ArraySlice<UInt8>) throws(CDNRefusal) -> Int {
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(value)
        else {
            throw .format("a port that is not a number from 1 to 65535")
        }
        return value
    }

    /// The path with its query, as a request line names it.
    public var pathAndQuery: String { path + (query.map { "?\($0)" } ?? "") }

    /// The URL with ``scopePath`` for its path: what a pattern over the whole
    /// URL (a CloudFront `Resource`) is judged against.
    public var scopeURL: String { origin + scopePath + (query.map { "?\($0)" } ?? "") }
}

extension UInt8 {
    var isASCIILetterOrDigit: Bool {
        (self >= 0x30 && self <= 0x39) || (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A)
    }

    /// A byte of a URL's host and port: letters, digits, `-`, `.`, `:` and IPv6 brackets.
    package var isAuthorityByte: Bool {
        isASCIILetterOrDigit || self == UInt8(ascii: "-") || self == UInt8(ascii: ".") || self == UInt8(ascii: ":")
            || self == UInt8(ascii: "[") || self == UInt8(ascii: "]")
    }
}
