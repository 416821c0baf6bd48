import CDNTokens

/// FuzzDASH: an MPD read and rewritten for a viewer whose token holds what
/// XML and DASH templates must escape (docs/DESIGN.md#the-mpd-reader).
///
/// - **A refusal is located**: an error's offset lies inside the input.
/// - **Only the edits change**: between the edits the rewritten bytes are the
///   input's, byte for byte, and each edit's bytes are its link's writing.
/// - **The strip oracle**: each written URI, XML-decoded, with the token taken
///   off (a media URI inside the scope) or the gate route and `tgs` taken off
///   (a playlist URI), is the link's canonical URI (the resolved original on
///   the scope's origin); a `BaseURL` or a URI left alone is written as exactly
///   that. The resolved URI keeps the original reference's last path segment
///   and query, so each edit is the attribute or text it claims to be.
/// - **The output is an MPD again**: it reads back (the token's names
///   unchecked, since the token is now in the query) with as many URIs.
public final class DASHManifestOracle: Sendable {
    public static let target = "FuzzDASH"

    public let url: CDNURL
    public let scope: ManifestScope
    public let viewer: ManifestViewer

    public init() {
        url = try! CDNURL(parsing: "https://cdn.example.com/dash/ch1/manifest.mpd")
        scope = ManifestScope(resourceURL: url, tokenNames: ["md5", "expires"])
        viewer = ManifestViewer(
            gateRoute: "/v1/manifest",
            session: "SESSION",
            token: [CDNField("md5", "a&b\"c'<d>$e"), CDNField("expires", "1767225600")]
        )
    }

    public func check(_ input: [UInt8]) {
        if input.starts(with: "#EXTM3U".utf8) { return }
        let parsed: ParsedManifest
        do {
            parsed = try ParsedManifest.read(input, url: url, scope: scope)
        } catch {
            if let offset = error.offset, offset < 0 || offset > input.count {
                oracleFailure(Self.target, "an error located outside the input (\(offset) of \(input.count)): \(error.reason)")
            }
            return
        }
        guard parsed.format == .dash else { oracleFailure(Self.target, "an MPD read as \(parsed.format)") }
        let output = parsed.rewritten(for: viewer)
        var inCursor = 0
        var outCursor = 0
        for edit in parsed.edits {
            let kept = edit.range.lowerBound - inCursor
            guard kept >= 0, outCursor + kept <= output.count,
                output[outCursor..<(outCursor + kept)].elementsEqual(input[inCursor..<edit.range.lowerBound])
            else {
                oracleFailure(Self.target, "bytes outside the edits changed before offset \(edit.range.lowerBound)")
            }
            outCursor += kept
            let written = Array(edit.link.written(for: viewer).utf8)
            guard outCursor + written.count <= output.count, output[outCursor..<(outCursor + written.count)].elementsEqual(written) else {
                oracleFailure(Self.target, "the edit at \(edit.range.lowerBound) is not its link's writing")
            }
            outCursor += written.count
            inCursor = edit.range.upperBound
            checkStrip(edit, written: written, original: Array(input[edit.range]))
        }
        guard output[outCursor...].elementsEqual(input[inCursor...]) else {
            oracleFailure(Self.target, "bytes after the last edit changed")
        }
        // Read again as written for a viewer whose token holds no '$' (one that does is,
        // rightly, refused as a base under a template when the fetched BaseURL carries it).
        let unchecked = ManifestScope(resourceURL: url)
        let plainViewer = ManifestViewer(gateRoute: viewer.gateRoute, session: viewer.session, token: [CDNField("md5", "a&b\"c'<d>e")])
        do {
            let again = try ParsedManifest.read(parsed.rewritten(for: plainViewer), url: url, scope: unchecked)
            guard again.edits.count == parsed.edits.count else {
                oracleFailure(Self.target, "the rewritten MPD has \(again.edits.count) URIs, the original \(parsed.edits.count)")
            }
        } catch {
            oracleFailure(Self.target, "the rewritten MPD does not read again: \(error.reason)\n\(escaped(input.prefix(2000)))")
        }
    }

    private func checkStrip(_ edit: ManifestEdit, written: [UInt8], original: [UInt8]) {
        let link = edit.link
        let text = Self.xmlDecoded(written)
        let canonical = link.canonical(scope: scope)
        var stripped = text
        if link.classification == .inside, link.role == .media {
            var token = viewer.tokenQuery
            if link.escaping == .dashTemplate { token = token.replacingOccurrences("$", "$$") }
            stripped = Self.removingPair(token, from: text)
        } else if link.classification == .inside, link.role == .playlist {
            guard text.hasPrefix(viewer.gateRoute) else { oracleFailure(Self.target, "a playlist URI not on the gate route: \(escaped(written))") }
            stripped = scope.origin + Self.removingPair(viewer.sessionQuery, from: String(text.dropFirst(viewer.gateRoute.count)))
        }
        guard stripped == canonical else {
            oracleFailure(Self.target, "stripped of its token, \(escaped(written)) is \(escaped(stripped.utf8)), not \(escaped(canonical.utf8))")
        }
        // The original reference, decoded: its last segment and query survive resolution.
        let reference = Self.xmlDecoded(original).trimmingSpaces
        let beforeFragment = reference.prefix { $0 != "#" }
        var pathPart = beforeFragment.prefix { $0 != "?" }
        // A scheme (RFC 3986 §3.1) is not path.
        if let colon = pathPart.firstIndex(of: ":"), !pathPart[..<colon].contains("/"), pathPart.first?.isLetter == true {
            pathPart = pathPart[pathPart.index(after: colon)...]
        }
        let query = beforeFragment.firstIndex(of: "?").map { String(beforeFragment[beforeFragment.index(after: $0)...]) }
        let afterAuthority =
            pathPart.contains("//")
            ? pathPart.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(3).first.map { "/" + $0 } ?? ""
            : String(pathPart)
        let last = afterAuthority.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        if !last.isEmpty, last != ".", last != "..", !(link.resolved.path == last || link.resolved.path.hasSuffix("/" + last)) {
            oracleFailure(Self.target, "the reference \(escaped(reference.utf8)) resolved to the path \(escaped(link.resolved.path.utf8))")
        }
        if let query, !pathPart.isEmpty, link.resolved.query != query {
            oracleFailure(Self.target, "the reference \(escaped(reference.utf8)) lost its query")
        }
    }

    /// `text` without `pair` and the `?` or `&` before it; a trap if it is not there exactly once.
    static func removingPair(_ pair: String, from text: String) -> String {
        let bytes = Array(text.utf8)
        let needle = Array(pair.utf8)
        var found: Int? = nil
        var index = 1
        while index + needle.count <= bytes.count {
            if bytes[index - 1] == UInt8(ascii: "?") || bytes[index - 1] == UInt8(ascii: "&"),
                bytes[index..<(index + needle.count)].elementsEqual(needle),
                index + needle.count == bytes.count || bytes[index + needle.count] == UInt8(ascii: "#")
            {
                guard found == nil else { oracleFailure(DASHManifestOracle.target, "the token twice in \(escaped(bytes))") }
                found = index
            }
            index += 1
        }
        guard let found else { oracleFailure(DASHManifestOracle.target, "no token at the end of the query of \(escaped(bytes))") }
        let out = Array(bytes[..<(found - 1)]) + bytes[(found + needle.count)...]
        return String(decoding: out, as: UTF8.self)
    }

    /// XML's five entities and character references decoded, written here and not taken from the library.
    static func xmlDecoded(_ bytes: [UInt8]) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        while let amp = text.firstIndex(of: "&") {
            out += text[..<amp]
            guard let semi = text[amp...].firstIndex(of: ";") else { break }
            let name = text[text.index(after: amp)..<semi]
            switch name {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                if name.hasPrefix("#x"), let value = UInt32(name.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(value) {
                    out.unicodeScalars.append(scalar)
                } else if name.hasPrefix("#"), let value = UInt32(name.dropFirst()), let scalar = Unicode.Scalar(value) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += text[amp...semi]
                }
            }
            text = String(text[text.index(after: semi)...])
        }
        return out + text
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }

    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
