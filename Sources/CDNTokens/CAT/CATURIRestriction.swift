import EntitlementTokens

/// A URI component `catu` restricts (CTA-5007, URI claim), as read from a
/// `CDNURL`. docs/DESIGN.md#the-cdn-exchange says how each is cut:
/// `https://h:8443/hls/tnt/seg.1.ts?a=1` has scheme `https`, host `h`, port
/// `8443` (the scheme's default, `443` or `80`, when none is written), path
/// `/hls/tnt/seg.1.ts`, query `a=1` (empty when none), parent path `/hls/tnt`
/// (the path before its last `/`), filename `seg.1.ts`, stem `seg.1` (the
/// filename before its last `.`, or all of it) and extension `.ts` (from the
/// last `.`, or empty).
public enum CATURIComponent: Int64, Sendable, Hashable, CaseIterable {
    case scheme = 0
    case host = 1
    case port = 2
    case path = 3
    case query = 4
    case parentPath = 5
    case filename = 6
    case stem = 7
    case fileExtension = 8

    public var name: String {
        switch self {
        case .scheme: "scheme"
        case .host: "host"
        case .port: "port"
        case .path: "path"
        case .query: "query"
        case .parentPath: "parent path"
        case .filename: "filename"
        case .stem: "stem"
        case .fileExtension: "extension"
        }
    }

    /// This component of `url`, as the bytes an edge compares: the path and
    /// its parts from ``RequestPath``'s one reading (``CDNURL/scopePath``).
    public func value(of url: CDNURL) -> String {
        let path = url.scopePath
        let lastSlash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let filename = lastSlash.map { String(path[path.index(after: $0)...]) } ?? path
        let lastDot = filename.utf8.lastIndex(of: UInt8(ascii: "."))
        switch self {
        case .scheme: return url.scheme
        case .host: return url.host
        case .port: return String(url.port ?? (url.scheme == "https" ? 443 : 80))
        case .path: return path
        case .query: return url.query ?? ""
        case .parentPath: return lastSlash.map { String(path[..<$0]) } ?? ""
        case .filename: return filename
        case .stem: return lastDot.map { String(filename[..<$0]) } ?? filename
        case .fileExtension: return lastDot.map { String(filename[$0...]) } ?? ""
        }
    }
}

/// How a `catu` component is matched (CTA-5007): the text match types
/// compare UTF-8 bytes (never Unicode equivalence); the hash types compare
/// the digest of the component's bytes with a byte string.
public enum CATMatchType: Int64, Sendable, Hashable, CaseIterable {
    case exact = 0
    case prefix = 1
    case suffix = 2
    case contains = 3
    case regex = 4
    case sha256 = -1
    case sha512_256 = -2

    public var name: String {
        switch self {
        case .exact: "exact"
        case .prefix: "prefix"
        case .suffix: "suffix"
        case .contains: "contains"
        case .regex: "regex"
        case .sha256: "sha-256"
        case .sha512_256: "sha-512/256"
        }
    }
}

/// The `catu` claim: for each URI component, the matches it must meet.
///
/// Every match written for a component must hold (a token that writes two
/// is read as the stricter); unknown components and match types, and regular
/// expressions (a backtracking matcher on hostile input is a denial of
/// service), are refused as `UNSUPPORTED_CLAIM` when judged, never skipped.
public struct CATURIRestriction: Sendable, Hashable {
    public struct Match: Sendable, Hashable {
        /// The match type's key as written (see ``CATMatchType``).
        public let type: Int64
        /// Text for the text match types, a byte string for the hash types.
        public let value: CBORValue
    }

    public struct Condition: Sendable, Hashable {
        /// The component's key as written (see ``CATURIComponent``).
        public let component: Int64
        public let matches: [Match]
    }

    public let conditions: [Condition]

    /// Reads the claim's value: a map of integer component keys to maps of
    /// integer match types to text or bytes.
    init(claim value: CBORValue) throws(CDNRefusal) {
        guard let components = value.mapEntries else { throw .format("catu is not a map") }
        var conditions: [Condition] = []
        for entry in components {
            guard let component = entry.key.int64 else { throw .format("catu has a component key \(entry.key.diagnostic()) that is not an integer") }
            guard let matchEntries = entry.value.mapEntries, !matchEntries.isEmpty else {
                throw .format("catu component \(component) is not a map of match types")
            }
            var matches: [Match] = []
            for match in matchEntries {
                guard let type = match.key.int64 else { throw .format("catu component \(component) has a match type that is not an integer") }
                switch (CATMatchType(rawValue: type), match.value) {
                case (.sha256?, .bytes), (.sha512_256?, .bytes): break
                case (.sha256?, _), (.sha512_256?, _): throw .format("catu component \(component): a hash match is a byte string")
                case (_, .text): break
                default: throw .format("catu component \(component): match \(type) is not text")
                }
                matches.append(Match(type: type, value: match.value))
            }
            conditions.append(Condition(component: component, matches: matches))
        }
        self.conditions = conditions
    }

    /// Passes when every condition holds for `url`; otherwise `URL_NOT_COVERED`
    /// naming the component, the match and the URL, or `UNSUPPORTED_CLAIM`.
    public func judge(_ url: CDNURL) throws(CDNRefusal) {
        for condition in conditions {
            guard let component = CATURIComponent(rawValue: condition.component) else {
                throw CDNRefusal(.unsupportedClaim, "catu component \(condition.component) is not one this reader knows")
            }
            let actual = Array(component.value(of: url).utf8)
            for match in condition.matches {
                guard let type = CATMatchType(rawValue: match.type) else {
                    throw CDNRefusal(.unsupportedClaim, "catu match type \(match.type) on the \(component.name) is not one this reader knows")
                }
                guard try Self.holds(type, match.value, actual) else {
                    throw CDNRefusal(
                        .urlNotCovered,
                        "catu \(component.name) \(type.name) \(match.value.diagnostic()) does not cover \(url) (its \(component.name) is \(CBORValue.text(String(decoding: actual, as: UTF8.self)).diagnostic()))"
                    )
                }
            }
        }
    }

    private static func holds(_ type: CATMatchType, _ expected: CBORValue, _ actual: [UInt8]) throws(CDNRefusal) -> Bool {
        switch (type, expected) {
        case (.regex, _):
            throw CDNRefusal(.unsupportedClaim, "catu regex match (regular expressions are not evaluated)")
        case (.sha256, .bytes(let digest)):
            return ForeignDigest.sha256.digest(of: actual) == digest
        case (.sha512_256, .bytes(let digest)):
            return ForeignDigest.sha512_256.digest(of: actual) == digest
        case (_, .text(let text)):
            let wanted = Array(text.utf8)
            switch type {
            case .exact: return actual == wanted
            case .prefix: return actual.starts(with: wanted)
            case .suffix: return actual.count >= wanted.count && actual[(actual.count - wanted.count)...].elementsEqual(wanted)
            default: return contains(actual, wanted)
            }
        default:
            return false
        }
    }

    /// Knuth–Morris–Pratt: linear in both lengths, whatever the bytes.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count else { return false }
        var failure = [Int](repeating: 0, count: needle.count)
        var length = 0
        for index in needle.indices.dropFirst() {
            while length > 0 && needle[index] != needle[length] { length = failure[length - 1] }
            if needle[index] == needle[length] { length += 1 }
            failure[index] = length
        }
        var matched = 0
        for byte in haystack {
            while matched > 0 && byte != needle[matched] { matched = failure[matched - 1] }
            if byte == needle[matched] { matched += 1 }
            if matched == needle.count { return true }
        }
        return false
    }
}

extension CATURIRestriction {
    /// `uri` without any `name=…` (or bare `name`) pair in its query: the URI
    /// `catu` is judged against when the token travels in the query (it
    /// cannot cover its own text; node-cat removes it too). The other pairs
    /// keep their order and bytes, and an emptied query loses its `?`. The
    /// gate's origin check and `tokeninspect har` both judge this URI.
    package static func uri(withoutParameter name: String, of uri: Substring) -> String {
        // Read by bytes: `?`, `&` and `=` are ASCII, so each found index is a boundary of the text.
        let bytes = uri.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return String(uri) }
        var kept: [Substring] = []
        var removed = false
        var start = bytes.index(after: mark)
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            let pair = uri[start..<end]
            let key = pair.utf8.firstIndex(of: UInt8(ascii: "=")).map { pair[..<$0] } ?? pair
            if key.utf8.elementsEqual(name.utf8) { removed = true } else { kept.append(pair) }
            guard end < bytes.endIndex else { break }
            start = bytes.index(after: end)
        }
        guard removed else { return String(uri) }
        return String(uri[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }
}
