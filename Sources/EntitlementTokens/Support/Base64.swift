/// Base64 decoding, strict where it matters for diagnosis and nothing more.
///
/// Written here rather than borrowed from Foundation because the decoder must
/// say *where* and *why* input is not Base64 (a space where a `+` was, two
/// alphabets mixed), and because it runs once per token on the hot path.
package enum Base64 {
    package enum Alphabet: Sendable, Hashable {
        case standard  // `+` `/`
        case url  // `-` `_`
    }

    package enum Whitespace {
        /// Only CR and LF may appear (a token wrapped across lines). A space is an error.
        case lineBreaks
        /// Any ASCII white space is skipped (signature text inside `signatureInfo`).
        case any
    }

    package struct Failure: Error {
        package enum Reason {
            case invalidCharacter(UInt8)
            case space
            case mixedAlphabets
            case misplacedPadding
            case truncated
        }
        package var reason: Reason
        package var offset: Int
    }

    /// 0...63 for alphabet characters, 64 for `=`, 0xFE for skippable white space, 0xFF otherwise.
    static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(char)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "_"))] = 63
        table[Int(UInt8(ascii: "="))] = 64
        return table
    }()

    package static func decode(_ input: [UInt8], whitespace: Whitespace) throws(Failure) -> (bytes: [UInt8], alphabet: Alphabet) {
        try decode(input.span, whitespace: whitespace)
    }

    /// A character of either alphabet, or `=`.
    static func isAlphabetOrPadding(_ byte: UInt8) -> Bool { table[Int(byte)] != 0xFF }

    /// The first byte that is neither in either alphabet, nor `=`, nor white space.
    static func firstInvalidCharacter(in input: [UInt8]) -> Int? {
        input.firstIndex { table[Int($0)] == 0xFF && !$0.isASCIIWhitespace }
    }

    /// Base64 in either alphabet, padded or not: the one encoder (tokens
    /// minted, CloudFront's fields, secure_link's MD5, and Base64url's
    /// canonical text, which is `.url` unpadded).
    package static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool = true) -> String {
        let bytes = Array(bytes)
        return encode(bytes.span, alphabet: alphabet, padded: padded)
    }

    /// The same over a span of the bytes.
    package static func encode(_ bytes: Span<UInt8>, alphabet: Alphabet, padded: Bool) -> String {
        var output = [UInt8]()
        append(bytes, alphabet: alphabet, padded: padded, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The text appended to `output` (a Redis key after its prefix), three
    /// bytes to four characters, into capacity reserved once.
    package static func append(_ bytes: Span<UInt8>, alphabet: Alphabet, padded: Bool, to output: inout [UInt8]) {
        output.append(addingCapacity: (bytes.count + 2) / 3 * 4) { output in
            write(bytes, alphabet: alphabet, padded: padded, to: &output)
        }
    }

    private static func write(_ bytes: Span<UInt8>, alphabet: Alphabet, padded: Bool, to output: inout OutputSpan<UInt8>) {
        let symbols = (alphabet == .standard ? standardSymbols : urlSymbols).span
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(symbols[Int(chunk >> 18 & 63)])
            output.append(symbols[Int(chunk >> 12 & 63)])
            output.append(symbols[Int(chunk >> 6 & 63)])
            output.append(symbols[Int(chunk & 63)])
            index += 3
        }
        let left = bytes.count - index
        if left > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(symbols[Int(chunk >> 18 & 63)])
            output.append(symbols[Int(chunk >> 12 & 63)])
            if left == 2 { output.append(symbols[Int(chunk >> 6 & 63)]) }
            if padded {
                output.append(UInt8(ascii: "="))
                if left == 1 { output.append(UInt8(ascii: "=")) }
            }
        }
    }

    private static let standardSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
