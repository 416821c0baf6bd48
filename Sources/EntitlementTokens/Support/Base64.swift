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
        package enum Reason { case invalidCharacter(UInt8), space, mixedAlphabets, misplacedPadding, truncated }
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

    /// Standard Base64 with padding (for `mint` and test fixtures).
    package static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool = true) -> String {
        let symbols = Array(
            (alphabet == .standard
                ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").utf8
        )
        var output = [UInt8]()
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let chunk = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(symbols[Int(chunk >> 18 & 63)])
            output.append(symbols[Int(chunk >> 12 & 63)])
            if second != nil { output.append(symbols[Int(chunk >> 6 & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            if third != nil { output.append(symbols[Int(chunk & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
