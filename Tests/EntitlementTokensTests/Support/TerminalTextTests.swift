import Testing

@testable import EntitlementTokens

/// `TerminalText.escaped` decides a `String` or a `Substring` over its bytes
/// at once and returns printable ASCII as it is; the generic body walks the
/// scalars. Both must give the same text for every scalar, wherever it falls.
@Suite struct TerminalTextTests {
    /// Reached from a generic context, so the `StringProtocol` body answers.
    private func generic<Text: StringProtocol>(_ text: Text) -> String {
        TerminalText.escaped(text)
    }

    private static let scalars: [Unicode.Scalar] =
        (0..<0x80).compactMap(Unicode.Scalar.init) + ["\u{85}", "\u{A0}", "é", "\u{200E}", "\u{2028}", "\u{202E}", "\u{2066}", "\u{FEFF}", "😀"]

    @Test func theStringAndSubstringFastPathsAgreeWithTheScalarWalk() {
        for scalar in Self.scalars {
            for text in [String(scalar), "ab" + String(scalar), String(scalar) + "cd", "ab" + String(scalar) + "cd"] {
                let expected = generic(text)
                #expect(TerminalText.escaped(text) == expected, "U+\(String(scalar.value, radix: 16))")
                let framed = "<" + text + ">"
                let inner = framed.dropFirst().dropLast()
                #expect(TerminalText.escaped(inner) == expected, "U+\(String(scalar.value, radix: 16)) in a substring")
            }
        }
    }

    @Test func printableASCIIComesBackAsItIs() {
        let printable = String(decoding: (0x20..<0x7F).map { UInt8($0) }, as: UTF8.self)
        #expect(TerminalText.escaped(printable) == printable)
        #expect(TerminalText.escaped(printable[...]) == printable)
        #expect(TerminalText.escaped("") == "")
        // A control byte is escaped however late it comes.
        #expect(TerminalText.escaped(printable + "\u{7F}") == printable + "\\x7f")
        #expect(TerminalText.escaped(printable + "\u{1B}") == printable + "\\x1b")
    }
}
