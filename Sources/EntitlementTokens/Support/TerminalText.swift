/// Text that is safe to write to a terminal or a log line: every string that
/// came from input has been escaped on its way in (docs/DESIGN.md#text-for-people).
///
/// This is the one choke point for text output. A `TerminalText` is built by
/// string interpolation: the literal parts are the program's own, and every
/// interpolated `String` is escaped — C0 and C1 controls, DEL, U+2028/U+2029
/// and the bidi controls become visible escapes (`\x1b`, `\u{202E}`) — so a
/// forged token can never move the cursor, erase a line, write the clipboard
/// (OSC 52), reorder text, or draw a status line of its own. Only other
/// `TerminalText` values (and numbers) are interpolated as they are, so code
/// that writes text output cannot forget to escape: the output streams take
/// `TerminalText`, not `String`.
public struct TerminalText: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The escaped text, ready to write.
    public private(set) var rendered: String

    /// A literal of the program's own: taken as it is.
    public init(stringLiteral literal: String) {
        rendered = literal
    }

    /// An interpolation: literals as they are, interpolated strings escaped.
    public init(stringInterpolation: Interpolation) {
        rendered = stringInterpolation.rendered
    }

    /// Input-derived text, escaped.
    public init(escaping text: some StringProtocol) {
        rendered = Self.escaped(text)
    }

    /// Text the program made itself and knows to be safe (ANSI styles, a
    /// rendered block). Not for anything that came from input.
    init(trusted text: String) {
        rendered = text
    }

    public var description: String { rendered }

    /// Both texts, one after the other.
    public static func + (lhs: TerminalText, rhs: TerminalText) -> TerminalText {
        TerminalText(trusted: lhs.rendered + rhs.rendered)
    }

    /// Appends `rhs`.
    public static func += (lhs: inout TerminalText, rhs: TerminalText) {
        lhs.rendered += rhs.rendered
    }

    /// `parts` joined by `separator`.
    public static func joined(_ parts: [TerminalText], separator: TerminalText) -> TerminalText {
        TerminalText(trusted: parts.map(\.rendered).joined(separator: separator.rendered))
    }

    /// Builds a ``TerminalText`` from a literal: literal parts as they are, interpolated strings escaped.
    /// Builds a `TerminalText`, escaping what is interpolated (see the type).
    public struct Interpolation: StringInterpolationProtocol {
        var rendered = ""

        /// Reserves room for the literal parts and the interpolations.
        public init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        /// A literal part: the program's own text, as it is.
        public mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        /// Input-derived text: escaped.
        public mutating func appendInterpolation(_ text: some StringProtocol) {
            TerminalText.escape(text, into: &rendered)
        }

        /// Anything described by text (an error, a status): its description, escaped.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            TerminalText.escape(value.description, into: &rendered)
        }

        /// Already safe: as it is.
        public mutating func appendInterpolation(_ text: TerminalText) {
            rendered += text.rendered
        }

        /// A number, in decimal.
        public mutating func appendInterpolation(_ value: some BinaryInteger) {
            rendered += String(value)
        }
    }

    /// `'text'`, escaped: how reasons quote an id.
    public static func quoted(_ text: some StringProtocol) -> String {
        "'" + escaped(text) + "'"
    }

    /// `text` with every character that could drive a terminal shown as a
    /// visible escape; unchanged (and not copied) when it has none.
    public static func escaped(_ text: some StringProtocol) -> String {
        escapedText(text)
    }

    /// The same for a `String`: a caller in another module reaches the
    /// generic version unspecialized, which walks the bytes through
    /// protocol witnesses; this overload is specialized here.
    public static func escaped(_ text: String) -> String {
        if isPrintableASCII(text.utf8.span) { return text }
        return escapedText(text)
    }

    /// The same for a `Substring`, specialized here as the `String` one is.
    public static func escaped(_ text: Substring) -> String {
        if isPrintableASCII(text.utf8.span) { return String(text) }
        return escapedText(text)
    }

    /// The usual case decided over the bytes at once, without a string's
    /// index checks a byte: every byte printable ASCII, nothing to escape.
    private static func isPrintableASCII(_ bytes: Span<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte >= 0x7F { return false }
            index += 1
        }
        return true
    }

    /// The one body of the three `escaped` overloads.
    private static func escapedText(_ text: some StringProtocol) -> String {
        if !needsEscaping(text) { return String(text) }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        escapeSlowly(text, into: &result)
        return result
    }

    static func escape(_ text: some StringProtocol, into output: inout String) {
        if !needsEscaping(text) {
            output += text
        } else {
            escapeSlowly(text, into: &output)
        }
    }

    /// True when a scalar of `text` is one ``isUnsafe(_:)`` names. Printable
    /// ASCII, the usual case, is decided byte by byte without decoding.
    static func needsEscaping(_ text: some StringProtocol) -> Bool {
        for byte in text.utf8 where byte < 0x20 || byte >= 0x7F {
            if byte < 0x80 { return true }
            return text.unicodeScalars.contains(where: isUnsafe)
        }
        return false
    }

    private static func escapeSlowly(_ text: some StringProtocol, into output: inout String) {
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                output.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                output += scalar.value < 0x80 ? "\\x" + (hex.count == 1 ? "0" + hex : hex) : "\\u{\(hex.uppercased())}"
            }
        }
    }

    /// Controls (C0, DEL, C1), the line and paragraph separators, the bidi
    /// controls (embeddings, overrides, isolates, marks) and the byte order
    /// mark / zero-width no-break space.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }
}
