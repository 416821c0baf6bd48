import EntitlementTokens

/// The URIs of an HLS playlist (RFC 8216 and its revision, draft-pantos-hls-rfc8216bis),
/// found line by line in one pass: where each lies in the bytes, what it names, and how
/// it resolves against the playlist's own URL. Every other line is kept byte for byte.
///
/// | playlist | URIs | role |
/// |---|---|---|
/// | multivariant | the URI line after `#EXT-X-STREAM-INF`; `URI=` of `#EXT-X-MEDIA`, `#EXT-X-I-FRAME-STREAM-INF` | playlist |
/// | multivariant | `URI=` of `#EXT-X-SESSION-DATA`, `#EXT-X-SESSION-KEY` | media |
/// | media | each segment URI line; `URI=` of `#EXT-X-MAP`, `#EXT-X-KEY`, `#EXT-X-PART`, `#EXT-X-PRELOAD-HINT` | media |
/// | media | `URI=` of `#EXT-X-RENDITION-REPORT` | playlist |
enum HLSManifestReader {
    /// Tags whose `URI` attribute is rewritten, and what it names.
    fileprivate static let uriTags: [String: (role: ManifestLinkRole, multivariant: Bool)] = [
        "#EXT-X-MEDIA": (.playlist, true),
        "#EXT-X-I-FRAME-STREAM-INF": (.playlist, true),
        "#EXT-X-SESSION-DATA": (.media, true),
        "#EXT-X-SESSION-KEY": (.media, true),
        "#EXT-X-MAP": (.media, false),
        "#EXT-X-KEY": (.media, false),
        "#EXT-X-PART": (.media, false),
        "#EXT-X-PRELOAD-HINT": (.media, false),
        "#EXT-X-RENDITION-REPORT": (.playlist, false),
    ]

    static func read(_ bytes: [UInt8], url: CDNURL, scope: ManifestScope, limits: ManifestLimits) throws(ManifestError) -> ParsedManifest {
        var state = State(url: url, scope: scope, limits: limits)
        var lineStart = 0
        var number = 0
        while lineStart < bytes.count || number == 0 {
            number += 1
            let newline = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.endIndex
            var end = newline
            if end > lineStart, bytes[end - 1] == 0x0D { end -= 1 }
            guard end - lineStart <= limits.maximumLineBytes else {
                throw ManifestError("a line of \(end - lineStart) bytes (at most \(limits.maximumLineBytes))", line: number, offset: lineStart)
            }
            do {
                try state.line(bytes[lineStart..<end], number: number)
            } catch {
                throw error.at(line: number, offset: lineStart)
            }
            lineStart = newline + 1
        }
        return try state.finish(bytes)
    }

    private struct State {
        let scope: ManifestScope
        let base: ManifestURI
        let query: String?
        var edits: ManifestEditList
        var variables: [String: [UInt8]] = [:]
        var nextURILine: ManifestLinkRole? = nil
        var multivariant = false
        var media = false
        var ended = false
        var duration = 0.0

        init(url: CDNURL, scope: ManifestScope, limits: ManifestLimits) {
            self.scope = scope
            base = ManifestURI(url)
            query = url.query
            edits = ManifestEditList(limit: limits.maximumLinks)
        }

        mutating func line(_ line: ArraySlice<UInt8>, number: Int) throws(ManifestError) {
            if number == 1 {
                guard line.elementsEqual("#EXTM3U".utf8) else { throw ManifestError("the first line is not '#EXTM3U'") }
                return
            }
            guard let first = line.first else { return }
            guard first == UInt8(ascii: "#") else {
                let role = nextURILine ?? .media
                nextURILine = nil
                if role == .media { media = true }
                try link(line, role: role)
                return
            }
            guard line.starts(with: "#EXT".utf8) else { return }  // a comment
            let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
            let tag = String(decoding: line[..<colon], as: UTF8.self)
            let value = colon < line.endIndex ? line[(colon + 1)...] : line[line.endIndex...]
            switch tag {
            case "#EXT-X-STREAM-INF":
                _ = try HLSAttributeList(value)
                multivariant = true
                nextURILine = .playlist
            case "#EXTINF":
                media = true
                duration += try Self.segmentDuration(value)
                nextURILine = .media
            case "#EXT-X-ENDLIST":
                ended = true
            case "#EXT-X-DEFINE":
                try define(value)
            case "#EXT-X-CONTENT-STEERING":
                throw ManifestError("#EXT-X-CONTENT-STEERING, which the rewriting does not handle")
            case "#EXTM3U":
                throw ManifestError("a second '#EXTM3U'")
            default:
                guard let (role, isMultivariant) = HLSManifestReader.uriTags[tag] else { return }
                if isMultivariant { multivariant = true } else { media = true }
                let attributes = try HLSAttributeList(value)
                guard let uri = attributes["URI"] else { return }
                guard uri.quoted else { throw ManifestError("the URI of \(tag) is not a quoted string") }
                try link(line[uri.value], role: role)
            }
        }

        /// RFC 8216 §4.3.2.1: `#EXTINF:<duration>,[<title>]`, the duration a
        /// decimal integer or floating-point number.
        static func segmentDuration(_ value: ArraySlice<UInt8>) throws(ManifestError) -> Double {
            let number = value.prefix { $0 != UInt8(ascii: ",") }
            var dots = 0
            let digits = number.allSatisfy { byte in
                if byte == UInt8(ascii: ".") {
                    dots += 1
                    return true
                }
                return byte >= 0x30 && byte <= 0x39
            }
            guard digits, dots <= 1, !number.isEmpty, number.count <= 32, number.first != UInt8(ascii: "."),
                let seconds = Double(String(decoding: number, as: UTF8.self)), seconds.isFinite
            else {
                throw ManifestError("an #EXTINF duration that is not a decimal number")
            }
            return seconds
        }

        /// RFC 8216bis §4.4.2.3: `NAME`+`VALUE` defines a variable; `QUERYPARAM`
        /// takes it from the playlist URL's query (as written). `IMPORT` takes
        /// it from the multivariant playlist, which the reading of this one
        /// does not know, so it is unreadable.
        mutating func define(_ value: ArraySlice<UInt8>) throws(ManifestError) {
            let attributes = try HLSAttributeList(value)
            let text = { (attribute: HLSAttributeList.Attribute) in value[attribute.value] }
            guard attributes["IMPORT"] == nil else {
                throw ManifestError("#EXT-X-DEFINE with IMPORT: the multivariant playlist's variables are not known here")
            }
            let name: ArraySlice<UInt8>
            let content: [UInt8]
            if let defined = attributes["NAME"], defined.quoted, let given = attributes["VALUE"], given.quoted, attributes["QUERYPARAM"] == nil {
                name = text(defined)
                content = Array(text(given))
            } else if let parameter = attributes["QUERYPARAM"], parameter.quoted, attributes["NAME"] == nil, attributes["VALUE"] == nil {
                name = text(parameter)
                let wanted = String(decoding: name, as: UTF8.self)
                let pairs = query?.split(separator: "&", omittingEmptySubsequences: true) ?? []
                let matches = pairs.filter { $0.prefix { $0 != "=" } == wanted }
                guard matches.count == 1, let pair = matches.first else {
                    throw ManifestError("#EXT-X-DEFINE QUERYPARAM \(wanted), which the playlist URL's query does not hold once")
                }
                content = Array(pair.drop { $0 != "=" }.dropFirst().utf8)
            } else {
                throw ManifestError("#EXT-X-DEFINE without a quoted NAME and VALUE or a quoted QUERYPARAM alone")
            }
            let key = String(decoding: name, as: UTF8.self)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
                throw ManifestError("an #EXT-X-DEFINE name other than letters, digits, '-' and '_': \(key)")
            }
            guard variables[key] == nil else { throw ManifestError("the variable \(key) defined twice") }
            variables[key] = content
        }

        /// `{$name}` replaced by the variable's value, in one pass; an undefined one is an error.
        func substituted(_ text: ArraySlice<UInt8>) throws(ManifestError) -> ArraySlice<UInt8> {
            guard text.contains(UInt8(ascii: "{")) else { return text }
            var out: [UInt8] = []
            out.reserveCapacity(text.count)
            var index = text.startIndex
            while index < text.endIndex {
                if text[index] == UInt8(ascii: "{"), text[index...].starts(with: "{$".utf8) {
                    // No '}' in the rest: nothing more to substitute (and each search starts past the last '}', so the pass stays linear).
                    guard let close = text[index...].firstIndex(of: UInt8(ascii: "}")) else {
                        out.append(contentsOf: text[index...])
                        break
                    }
                    let key = String(decoding: text[(index + 2)..<close], as: UTF8.self)
                    guard let value = variables[key] else { throw ManifestError("the variable \(key), which is not defined before it is used") }
                    out.append(contentsOf: value)
                    guard out.count <= ManifestURI.maximumLength else {
                        throw ManifestError("a URI longer than \(ManifestURI.maximumLength) bytes once its variables are substituted")
                    }
                    index = close + 1
                } else {
                    out.append(text[index])
                    index += 1
                }
            }
            return out[...]
        }

        mutating func link(_ text: ArraySlice<UInt8>, role: ManifestLinkRole) throws(ManifestError) {
            do {
                let reference = try ManifestURI(parsing: substituted(text))
                let link = try ManifestLink(reference: reference, base: base, role: role, scope: scope, escaping: .none)
                try edits.append(text.startIndex..<text.endIndex, link)
            } catch {
                throw error.at(line: nil, offset: text.startIndex)
            }
        }

        func finish(_ bytes: [UInt8]) throws(ManifestError) -> ParsedManifest {
            guard !(multivariant && media) else {
                throw ManifestError("a playlist with both multivariant tags and media segments (RFC 8216 §4.1)")
            }
            guard nextURILine == nil else { throw ManifestError("the playlist ends after a tag that needs a URI line") }
            return ParsedManifest(
                bytes: bytes,
                format: multivariant ? .hlsMultivariant : .hlsMedia,
                edits: edits.edits,
                isLive: multivariant || !ended,
                durationSeconds: multivariant ? nil : duration,
                scope: scope
            )
        }
    }
}
