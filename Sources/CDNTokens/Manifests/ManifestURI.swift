import EntitlementTokens

/// A URI reference as a manifest writes it, taken apart by RFC 3986
/// (Appendix B's five components), resolved by §5.2 against the URL it is
/// read from, and written back. So `../` inside a manifest is resolution, as a
/// player does it, not a request path (docs/DESIGN.md#tokens-inside-manifests).
///
/// Strict: only the bytes RFC 3986 allows in a URI (unreserved, reserved and
/// `%`); a space, a control byte, a non-ASCII byte, `"`, `<`, `>`, `\`, `{`,
/// `}`, `|`, `^` or a backtick is an error, because players and edges would
/// each escape it their own way. Escapes are kept as written; whether the
/// resolved path is one an edge reads one way is ``RequestPath``'s question,
/// asked after resolution. Every step is linear in the reference's length.
public struct ManifestURI: Sendable, Hashable, CustomStringConvertible {
    /// Lower-cased, without `:`; nil for a relative reference.
    public var scheme: String?
    /// After `//`, as written; nil when there is no `//`.
    public var authority: String?
    /// As written (possibly empty).
    public var path: String
    /// After `?`, as written; nil when there is no `?`.
    public var query: String?
    /// After `#`, as written; nil when there is no `#`.
    public var fragment: String?

    /// The longest reference read: a URL an edge accepts is about this size.
    public static let maximumLength = 8192

    public init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// The URL a manifest was fetched from, as a base for resolution.
    public init(_ url: CDNURL) {
        self.init(scheme: url.scheme, authority: url.host + (url.port.map { ":\($0)" } ?? ""), path: url.path, query: url.query, fragment: nil)
    }

    /// Reads a reference strictly; see the type for what is refused.
    public init(parsing bytes: some Collection<UInt8>) throws(ManifestError) {
        let text = Array(bytes)
        guard text.count <= Self.maximumLength else {
            throw ManifestError("a URI of \(text.count) bytes (at most \(Self.maximumLength))")
        }
        for byte in text where !Self.isURIByte(byte) {
            throw ManifestError("a URI holds \(Self.name(of: byte)), which a URI cannot hold unescaped")
        }
        var rest = text[...]
        // Appendix B: ^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?
        if let colon = rest.firstIndex(where: {
            $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
        }),
            rest[colon] == UInt8(ascii: ":"), colon > rest.startIndex
        {
            let name = rest[..<colon]
            // §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
            guard let first = name.first, first.isASCIILetter,
                name.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else {
                throw ManifestError("a URI whose scheme is not letters, digits, '+', '-' and '.' after a letter")
            }
            scheme = String(decoding: name, as: UTF8.self).lowercased()
            rest = rest[(colon + 1)...]
        } else if rest.first == UInt8(ascii: ":") {
            throw ManifestError("a URI that starts with ':'")
        } else {
            scheme = nil
        }
        if rest.starts(with: "//".utf8) {
            let start = rest.startIndex + 2
            let end = rest[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
            authority = String(decoding: rest[start..<end], as: UTF8.self)
            rest = rest[end...]
        } else {
            authority = nil
        }
        let pathEnd = rest.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        path = String(decoding: rest[..<pathEnd], as: UTF8.self)
        rest = rest[pathEnd...]
        if rest.first == UInt8(ascii: "?") {
            let end = rest.firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
            query = String(decoding: rest[(rest.startIndex + 1)..<end], as: UTF8.self)
            rest = rest[end...]
        } else {
            query = nil
        }
        if rest.first == UInt8(ascii: "#") {
            let body = rest.dropFirst()
            guard !body.contains(UInt8(ascii: "#")) else { throw ManifestError("a URI with a second '#'") }
            fragment = String(decoding: body, as: UTF8.self)
        } else {
            fragment = nil
        }
    }

    /// RFC 3986 §5.2.2, strict (a reference with a scheme is taken as it is).
    public func resolved(against base: ManifestURI) -> ManifestURI {
        var target = ManifestURI(scheme: nil, authority: nil, path: "", query: nil, fragment: fragment)
        if let scheme {
            target.scheme = scheme
            target.authority = authority
            target.path = Self.removeDotSegments(path)
            target.query = query
        } else {
            if let authority {
                target.authority = authority
                target.path = Self.removeDotSegments(path)
                target.query = query
            } else {
                if path.isEmpty {
                    target.path = base.path
                    target.query = query ?? base.query
                } else {
                    if path.hasPrefix("/") {
                        target.path = Self.removeDotSegments(path)
                    } else {
                        target.path = Self.removeDotSegments(Self.merge(base: base, path))
                    }
                    target.query = query
                }
                target.authority = base.authority
            }
            target.scheme = base.scheme
        }
        return target
    }

    /// §5.2.3.
    private static func merge(base: ManifestURI, _ path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    /// §5.2.4, over segments rather than by rescanning the buffer: linear.
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var output: [Substring] = []
        let absolute = path.hasPrefix("/")
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)[...]
        if absolute { segments = segments.dropFirst() }
        var endsInFolder = false
        for (index, segment) in zip(segments.indices, segments) {
            let last = index == segments.index(before: segments.endIndex)
            switch segment {
            case ".":
                endsInFolder = last
            case "..":
                if !output.isEmpty { output.removeLast() }
                endsInFolder = last
            default:
                output.append(segment)
                endsInFolder = false
            }
        }
        var result = absolute ? "/" : ""
        result += output.joined(separator: "/")
        if endsInFolder && !output.isEmpty { result += "/" }
        return result
    }

    /// §5.3.
    public var description: String {
        var text = ""
        if let scheme { text += scheme + ":" }
        if let authority { text += "//" + authority }
        text += path
        if let query { text += "?" + query }
        if let fragment { text += "#" + fragment }
        return text
    }

    /// §2: unreserved, gen-delims, sub-delims and `%`.
    static func isURIByte(_ byte: UInt8) -> Bool {
        if RequestPath.isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
            UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }

    static func name(of byte: UInt8) -> TerminalText {
        switch byte {
        case 0x20: return "a space"
        case 0..<0x20, 0x7F: return "a control byte"
        case 0x80...: return "a non-ASCII byte"
        default: return "'\(String(UnicodeScalar(byte)))'"
        }
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) }
}
