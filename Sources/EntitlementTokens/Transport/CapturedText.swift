/// Finds the token in text as people capture and paste it
/// (docs/DESIGN.md#what-people-paste): a whole URL or query string, `Bearer <token>`, a value in
/// quotes with a trailing comma (a JSON log line), a byte order mark before
/// Base64, a doubly percent-encoded value.
///
/// This is the decoder's second look, never its first: ``TransportDecoder``
/// reads a record as it stands, and only when that fails asks here whether a
/// token is wrapped in it. A token that decodes as given therefore pays
/// nothing, and a wrapping is only ever removed when the record could not be
/// read without removing it. Every layer removed is named in a warning.
///
/// What is never done here: turning a space back into `+` in Base64 (docs/DESIGN.md#transport-forms
/// — that stays ``DecoderConfiguration/repairsSpacesAsPlus``), or
/// looking inside raw XML.
enum CapturedText {
    /// The token found, and what was removed to reach it, outermost first.
    struct Unwrapped: Equatable {
        var token: [UInt8]
        var steps: [String]
    }

    enum Outcome: Equatable {
        /// A wrapping was removed.
        case unwrapped(Unwrapped)
        /// A URL or query string that has none of the parameters asked for.
        case missingParameter(String)
        /// Nothing recognisable: the record's own error stands.
        case none
    }

    /// At most this many layers are removed; each one shrinks the text, so
    /// the cost stays linear in the record.
    private static let maxLayers = 6

    static func unwrap(_ record: [UInt8], parameterNames: [String]) -> Outcome {
        var text = trimmed(record[...])
        var steps: [String] = []
        for _ in 0..<maxLayers {
            guard let first = text.first, first != UInt8(ascii: "<") else { break }
            if ByteRules.startsWithByteOrderMark(text) {
                text = trimmed(text.dropFirst(ByteRules.byteOrderMarkCount))
                steps.append("skipped a UTF-8 byte order mark before the token")
            } else if let (inner, step) = unquoted(text) {
                text = inner
                steps.append(step)
            } else if let inner = withoutBearer(text) {
                text = inner
                steps.append("removed 'Bearer ' before the token (an Authorization header value)")
            } else if isQuery(text) {
                guard let (value, step) = parameter(in: text, names: parameterNames) else {
                    return .missingParameter(missingParameterMessage(text, names: parameterNames))
                }
                text = value
                steps.append(step)
            } else {
                break
            }
        }
        var token = Array(text)
        if let inner = secondPercentLayer(token) {
            token = inner
            steps.append("undid a second layer of percent-encoding (the token was percent-encoded twice)")
        }
        return steps.isEmpty ? .none : .unwrapped(Unwrapped(token: token, steps: steps))
    }

    // MARK: Form encoding

    /// True when a percent-encoded value that decodes to raw XML was written
    /// by a form encoder (`URLSearchParams`, Python's `urlencode`): `+` for a
    /// space. Such a value holds `+` and never `%20`; a percent-encoder that
    /// writes `%20` leaves a literal `+` meaning `+`.
    static func isFormEncoded(_ value: Span<UInt8>) -> Bool {
        var sawPlus = false
        var window: (UInt8, UInt8) = (0, 0)
        for index in value.indices {
            let byte = value[index]
            if byte == UInt8(ascii: "+") { sawPlus = true }
            if window.0 == UInt8(ascii: "%"), window.1 == UInt8(ascii: "2"), byte == UInt8(ascii: "0") { return false }
            window = (window.1, byte)
        }
        return sawPlus
    }

    /// The value with each `+` turned into a space, ready for percent decoding.
    static func formSpaces(_ value: Span<UInt8>) -> [UInt8] {
        var spaced = [UInt8]()
        spaced.reserveCapacity(value.count)
        for index in value.indices {
            spaced.append(value[index] == UInt8(ascii: "+") ? UInt8(ascii: " ") : value[index])
        }
        return spaced
    }

    static let formEncodingWarning = "read '+' as a space: the raw XML was form-encoded (as URLSearchParams and urlencode write it)"

    // MARK: Layers

    private static func trimmed(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = text
        while let first = text.first, first.isASCIIWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isASCIIWhitespace { text = text.dropLast() }
        return text
    }

    /// `"…"`, `'…'`, either followed by a comma, or a bare value followed by a
    /// comma: how a value looks when copied out of a JSON log line. Inside
    /// double quotes, JSON string escapes (`\"`, `\/`, `\u003c`) are undone.
    private static func unquoted(_ text: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, String)? {
        var body = text
        var comma = false
        if body.last == UInt8(ascii: ",") {
            body = trimmed(body.dropLast())
            comma = true
        }
        guard let first = body.first, let last = body.last else { return nil }
        let quote: String
        switch first {
        case UInt8(ascii: "\""): quote = "double quotes"
        case UInt8(ascii: "'"): quote = "single quotes"
        default:
            return comma ? (body, "removed a trailing comma after the token") : nil
        }
        guard body.count >= 2, last == first else { return nil }
        body = trimmed(body.dropFirst().dropLast())
        let around = comma ? "the \(quote) and trailing comma around the token" : "the \(quote) around the token"
        if first == UInt8(ascii: "\""), body.contains(UInt8(ascii: "\\")) {
            guard let unescaped = jsonUnescaped(body) else { return nil }
            return (unescaped[...], "removed \(around) and undid its JSON string escapes")
        }
        return (body, "removed \(around)")
    }

    /// The JSON string escapes of RFC 8259 §7 undone; nil if one is malformed.
    private static func jsonUnescaped(_ body: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(body.count)
        var index = body.startIndex
        while index < body.endIndex {
            let byte = body[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                continue
            }
            guard index < body.endIndex else { return nil }
            let escape = body[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "u"):
                guard var scalar = hexQuad(body, at: index) else { return nil }
                index += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    // A surrogate pair: the low half must follow as `\uXXXX`.
                    guard index + 1 < body.endIndex, body[index] == UInt8(ascii: "\\"), body[index + 1] == UInt8(ascii: "u"),
                        let low = hexQuad(body, at: index + 2), (0xDC00..<0xE000).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                output.append(contentsOf: String(Character(unicode)).utf8)
            default:
                return nil
            }
        }
        return output
    }

    private static func hexQuad(_ body: ArraySlice<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= body.endIndex else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = ByteRules.hexValue(body[index + offset]) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// `Bearer <token>`, optionally after `Authorization:`, in any case.
    private static func withoutBearer(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var rest = text
        if let afterHeader = afterPrefix("authorization:", of: rest) { rest = trimmed(afterHeader) }
        guard let afterScheme = afterPrefix("bearer", of: rest), let separator = afterScheme.first,
            separator == UInt8(ascii: " ") || separator == UInt8(ascii: "\t")
        else { return nil }
        let token = trimmed(afterScheme)
        return token.isEmpty ? nil : token
    }

    /// The text after `prefix` (ASCII, compared without case), or nil.
    private static func afterPrefix(_ prefix: String, of text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let count = prefix.utf8.count
        guard text.count >= count else { return nil }
        for (offset, expected) in prefix.utf8.enumerated() where text[text.startIndex + offset] | 0x20 != expected {
            return nil
        }
        return text.dropFirst(count)
    }

    /// A URL or a query string of several parameters. Base64, Base64url and a
    /// percent-encoded token hold neither `?` nor `&`; a single `name=value`
    /// is read by ``TransportDecoder`` itself.
    private static func isQuery(_ text: ArraySlice<UInt8>) -> Bool {
        text.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "&") }
            || afterPrefix("https://", of: text) != nil || afterPrefix("http://", of: text) != nil
    }

    /// The parameters of a query: after the first `?` if there is one, up to a `#`.
    private static func queryParameters(_ text: ArraySlice<UInt8>) -> [(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        var query = text
        if let mark = query.firstIndex(of: UInt8(ascii: "?")) {
            query = query[(mark + 1)...]
        } else if afterPrefix("https://", of: text) != nil || afterPrefix("http://", of: text) != nil {
            return []
        }
        if let hash = query.firstIndex(of: UInt8(ascii: "#")) { query = query[..<hash] }
        return query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return (pair, pair[pair.endIndex...]) }
            return (pair[..<equals], pair[(equals + 1)...])
        }
    }

    /// The value of the first of `names` (in the order given) that the query holds.
    private static func parameter(in text: ArraySlice<UInt8>, names: [String]) -> (ArraySlice<UInt8>, String)? {
        let parameters = queryParameters(text)
        let whole = afterPrefix("https://", of: text) != nil || afterPrefix("http://", of: text) != nil ? "URL" : "query string"
        for name in names {
            if let found = parameters.first(where: { $0.name.elementsEqual(name.utf8) && !$0.value.isEmpty }) {
                return (trimmed(found.value), "took the token from the '\(name)' parameter of the \(whole)")
            }
        }
        return nil
    }

    private static func missingParameterMessage(_ text: ArraySlice<UInt8>, names: [String]) -> String {
        let asked = names.map { "'\($0)'" }.joined(separator: " or ")
        // A few names, each cut short: this text is hostile input.
        let present = queryParameters(text).prefix(8).map { String(decoding: $0.name.prefix(40), as: UTF8.self) }
        let has = present.isEmpty ? "it has no parameters" : "its parameters are " + present.joined(separator: ", ")
        return
            "this looks like a URL or query string, but it has no \(asked) parameter (\(has)); name the parameter that holds the token with --param"
    }

    /// The value decoded once, when it was percent-encoded twice: decoding
    /// once leaves more `%XX` escapes and neither raw XML nor Base64 (which
    /// never hold `%`).
    private static func secondPercentLayer(_ value: [UInt8]) -> [UInt8]? {
        guard PercentDecoding.looksEncoded(value.span), let once = try? PercentDecoding.decode(value.span) else { return nil }
        let stillEncoded = !TransportDecoder.startsLikeXML(once.span) && PercentDecoding.looksEncoded(once.span)
        return stillEncoded ? once : nil
    }
}
