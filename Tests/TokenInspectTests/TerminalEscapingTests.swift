import Testing
@testable import tokeninspect

/// The escaping applied to file names in key warnings and errors (SPEC §6).
@Suite struct TerminalEscapingTests {
    static let dangerous: [UInt32] = Array(0x00...0x1F) + Array(0x7F...0x9F)
        + [0x2028, 0x2029, 0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)

    @Test func everyControlBecomesAVisibleEscape() throws {
        for value in Self.dangerous {
            let scalar = try #require(Unicode.Scalar(value))
            let escaped = TerminalEscaping.escaped("a\(Character(scalar))b")
            #expect(!escaped.unicodeScalars.contains(scalar), "U+\(String(value, radix: 16)) passed raw")
            #expect(escaped.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, "\(escaped)")
            #expect(escaped.hasPrefix("a\\") && escaped.hasSuffix("b"))
        }
        #expect(TerminalEscaping.escaped("\u{1B}[2J") == "\\x1b[2J")
        #expect(TerminalEscaping.escaped("\u{7F}") == "\\x7f")
        #expect(TerminalEscaping.escaped("\u{9B}") == "\\u{9b}")
        #expect(TerminalEscaping.escaped("\u{202E}") == "\\u{202E}")
    }

    /// A backslash is doubled, so `\x1b` in the output always was an escape.
    @Test func backslashIsDoubled() {
        #expect(TerminalEscaping.escaped(#"a\x1b"#) == #"a\\x1b"#)
    }

    @Test func ordinaryTextIsUnchanged() {
        for text in ["keys/issuer.pem", "clés/émetteur – 2026.pem", "鍵.pem", "tab-free 🙂", ""] {
            #expect(TerminalEscaping.escaped(text) == text)
        }
    }
}
