import EntitlementTokens

/// JSON's string escapes (RFC 8259 §7) undone one byte at a time, for
/// ``HARRedactingWriter``: each byte of what a string says comes out with the
/// offset where its spelling began, so a match is replaced by whole escapes.
///
/// Surrogate pairs become one scalar. What is not an escape of JSON (a `\` before
/// another letter, a lone surrogate) is said to be broken, so no match reaches
/// across it, and the byte that broke it is read again as text.
struct JSONStringUnescaper {
    enum Output {
        case nothing
        case byte(UInt8, spelledFrom: Int)
        case scalar(UInt32, spelledFrom: Int)
    }

    private enum Place {
        case text
        case afterBackslash(start: Int)
        case unicodeEscape(start: Int, digitsLeft: Int, value: UInt32)
        /// After a high surrogate's `\uXXXX`: its low half's `\`, `u` and four digits must follow.
        case lowSurrogateBackslash(start: Int, high: UInt32)
        case lowSurrogateU(start: Int, high: UInt32)
        case lowSurrogateDigits(start: Int, high: UInt32, digitsLeft: Int, value: UInt32)
    }

    private var place = Place.text

    /// Where the escape being read began, if one is.
    var escapeStart: Int? {
        switch place {
        case .text: nil
        case .afterBackslash(let start), .unicodeEscape(let start, _, _), .lowSurrogateBackslash(let start, _),
            .lowSurrogateU(let start, _), .lowSurrogateDigits(let start, _, _, _):
            start
        }
    }

    mutating func reset() { place = .text }

    /// Reads `byte`, spelled at `offset`; `broken` when it ended an escape JSON does not have.
    mutating func read(_ byte: UInt8, at offset: Int) -> (output: Output, broken: Bool) {
        switch place {
        case .text:
            return (text(byte, at: offset), false)
        case .afterBackslash(let start):
            if byte == UInt8(ascii: "u") {
                place = .unicodeEscape(start: start, digitsLeft: 4, value: 0)
                return (.nothing, false)
            }
            guard let unescaped = ByteRules.jsonEscapedByte(byte) else { return broken(byte, at: offset) }
            place = .text
            return (.byte(unescaped, spelledFrom: start), false)
        case .unicodeEscape(let start, let digitsLeft, let value):
            guard let digit = ByteRules.hexValue(byte) else { return broken(byte, at: offset) }
            let unit = value << 4 | UInt32(digit)
            if digitsLeft > 1 {
                place = .unicodeEscape(start: start, digitsLeft: digitsLeft - 1, value: unit)
                return (.nothing, false)
            }
            switch unit {
            case 0xD800...0xDBFF:
                place = .lowSurrogateBackslash(start: start, high: unit)
                return (.nothing, false)
            case 0xDC00...0xDFFF:
                place = .text
                return (.nothing, true)
            default:
                place = .text
                return (.scalar(unit, spelledFrom: start), false)
            }
        case .lowSurrogateBackslash(let start, let high):
            guard byte == UInt8(ascii: "\\") else { return broken(byte, at: offset) }
            place = .lowSurrogateU(start: start, high: high)
            return (.nothing, false)
        case .lowSurrogateU(let start, let high):
            guard byte == UInt8(ascii: "u") else { return broken(byte, at: offset) }
            place = .lowSurrogateDigits(start: start, high: high, digitsLeft: 4, value: 0)
            return (.nothing, false)
        case .lowSurrogateDigits(let start, let high, let digitsLeft, let value):
            guard let digit = ByteRules.hexValue(byte) else { return broken(byte, at: offset) }
            let unit = value << 4 | UInt32(digit)
            if digitsLeft > 1 {
                place = .lowSurrogateDigits(start: start, high: high, digitsLeft: digitsLeft - 1, value: unit)
                return (.nothing, false)
            }
            place = .text
            guard (0xDC00...0xDFFF).contains(unit) else { return (.nothing, true) }
            return (.scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00), spelledFrom: start), false)
        }
    }

    private mutating func text(_ byte: UInt8, at offset: Int) -> Output {
        guard byte == UInt8(ascii: "\\") else { return .byte(byte, spelledFrom: offset) }
        place = .afterBackslash(start: offset)
        return .nothing
    }

    private mutating func broken(_ byte: UInt8, at offset: Int) -> (output: Output, broken: Bool) {
        place = .text
        return (text(byte, at: offset), true)
    }
}
