/// The one home of each byte rule the library applies in more than one place
/// (docs/DESIGN.md#a-concept-lives-in-one-place): hex digits, JSON's one-letter escapes, the UTF-8 byte
/// order mark, whitespace, and the names of the token's root elements and of `signatureInfo`.
package enum ByteRules {}

// MARK: - JSON escapes

extension ByteRules {
    /// The byte a one-letter JSON escape stands for (`\n` → LF; RFC 8259 §7), or nil
    /// for `u` (four hex digits follow) and for any letter JSON has no escape for.
    @inline(__always)
    package static func jsonEscapedByte(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): letter
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }
}

// MARK: - Hex

extension ByteRules {
    /// The digits the library writes hex with (digests, device ids, `\u00XX`).
    static var lowercaseHexDigits: StaticString { "0123456789abcdef" }

    /// The lowercase hex digit of `nibble` (0…15).
    @inline(__always)
    package static func lowercaseHexDigit(_ nibble: UInt8) -> UInt8 {
        precondition(nibble < 16)
        return nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }

    /// `bytes` as lowercase hex, two digits per byte.
    package static func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
        var digits: [UInt8] = []
        digits.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            digits.append(lowercaseHexDigit(byte >> 4))
            digits.append(lowercaseHexDigit(byte & 0x0F))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The value of a hex digit of either case, or nil.
    @inline(__always)
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}

// MARK: - Byte order mark

extension ByteRules {
    /// U+FEFF as UTF-8: EF BB BF. A mark at the start of the input is skipped
    /// (docs/DESIGN.md#what-people-paste); before a PEM block, too.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    package static var byteOrderMarkCount: Int { 3 }

    /// Whether `bytes` begin with the UTF-8 byte order mark.
    @inline(__always)
    package static func startsWithByteOrderMark(_ bytes: Span<UInt8>) -> Bool {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    }

    /// The same, for any collection of bytes.
    static func startsWithByteOrderMark<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.starts(with: byteOrderMark)
    }
}

// MARK: - Whitespace

extension UInt8 {
    /// Space, tab, line feed, carriage return: XML's `S` and JSON's `ws` are
    /// the same four bytes, and so is what PEM and Base64 bodies may carry.
    @inline(__always) var isASCIIWhitespace: Bool {
        self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09
    }

    @inline(__always) var isASCIILetter: Bool {
        (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z")
    }

    @inline(__always) var isASCIIDigit: Bool {
        self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")
    }
}

extension ByteRules {
    /// Whether every byte is ``Swift/UInt8/isASCIIWhitespace`` (true when empty).
    static func isBlank(_ bytes: Span<UInt8>) -> Bool {
        for index in bytes.indices where !bytes[index].isASCIIWhitespace { return false }
        return true
    }
}

// MARK: - Root names

extension ByteRules {
    // String literals returned from computed properties: immortal, so no
    // `swift_once`, allocation or retain on the framing's per-tag checks.

    /// The element that carries the signature, before or inside the token element.
    static var signatureInfo: String { "signatureInfo" }

    /// The root element of a short media token as servers send it.
    static var authToken: String { "authToken" }
    /// The root element of a short media token as the vendor's documentation shows it.
    static var shortAuthorizationToken: String { "shortAuthorizationToken" }
    /// The root element of an authorization token.
    static var simpleAuthorizationToken: String { "simpleAuthorizationToken" }
    /// The root element of an authentication token.
    static var simpleAuthenticationToken: String { "simpleAuthenticationToken" }

    /// The four token root names.
    static var tokenRoots: [String] { [authToken, shortAuthorizationToken, simpleAuthorizationToken, simpleAuthenticationToken] }

    /// Whether `name` is one of the four token root names. Compared by
    /// length first: the framing asks this for every tag of every token, and
    /// nearly every name differs in length from all four.
    @inline(__always)
    static func isTokenRoot(_ name: Span<UInt8>) -> Bool {
        switch name.count {
        case 9: ByteSearch.bytes(name, equalUTF8Of: authToken)
        case 23: ByteSearch.bytes(name, equalUTF8Of: shortAuthorizationToken)
        case 24: ByteSearch.bytes(name, equalUTF8Of: simpleAuthorizationToken)
        case 25: ByteSearch.bytes(name, equalUTF8Of: simpleAuthenticationToken)
        default: false
        }
    }

    @inline(__always)
    static func isSignatureInfo(_ name: Span<UInt8>) -> Bool {
        ByteSearch.bytes(name, equalUTF8Of: signatureInfo)
    }
}
