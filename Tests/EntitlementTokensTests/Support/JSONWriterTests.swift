import Foundation
import Testing

@testable import EntitlementTokens

/// The CLI's JSON string writer: every string must come back unchanged from a
/// JSON parser, whatever bytes it holds and wherever they fall relative to the
/// writer's eight-byte fast path.
@Suite struct JSONWriterTests {
    private func written(_ text: String) -> String {
        var json = JSONWriter(capacity: 16)  // small: the writer must grow as it goes
        json.beginArray()
        json.element()
        json.string(text)
        json.endArray()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    private func roundTrip(_ text: String) throws -> String? {
        let parsed = try JSONSerialization.jsonObject(with: Data(written(text).utf8)) as? [String]
        return parsed?.first
    }

    @Test func escapesExactlyWhatJSONRequires() {
        #expect(written("a\"b\\c") == #"["a\"b\\c"]"#)
        #expect(written("\n\r\t") == #"["\n\r\t"]"#)
        #expect(written("\u{0}\u{1F}\u{7F}") == #"["\u0000\u001f\u007f"]"#)
        #expect(written("é/✓😀") == "[\"é/✓😀\"]")
        #expect(written("") == #"[""]"#)
    }

    /// Every scalar the terminal rule names is written as an escape, never as
    /// itself: in the gate's form always `\uXXXX`, in the reports' form too
    /// but for `\n`, `\r`, `\t`; the scalars around them are kept as UTF-8.
    @Test(arguments: [JSONWriter.ControlEscapes.short, .unicode])
    func everyScalarTheTerminalRuleNamesIsEscaped(controlEscapes: JSONWriter.ControlEscapes) {
        let short: [UInt32: String] = [0x0A: #"\n"#, 0x0D: #"\r"#, 0x09: #"\t"#]
        for value in Array(UInt32(0)...0x3000) + [0xFEFF, 0xFEFE, 0xFF00, 0x1F600] {
            guard let scalar = Unicode.Scalar(value), scalar != "\"", scalar != "\\" else { continue }
            var json = JSONWriter(capacity: 16, controlEscapes: controlEscapes)
            json.string("x" + String(scalar) + "y")
            let hex = String(value, radix: 16)
            let escape = controlEscapes == .short ? short[value] : nil
            let expected =
                TerminalText.isUnsafe(scalar)
                ? escape ?? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                : String(scalar)
            #expect(json.text == "\"x" + expected + "y\"", "U+\(hex)")
        }
    }

    @Test func theGatesFormPinned() {
        var json = JSONWriter(capacity: 16, controlEscapes: .unicode)
        json.beginObject()
        json.member("reason")
        json.string("a\"b\\c\u{1}\r\n\t\u{85}\u{9B}é✓😀\u{202E}\u{2066}\u{FEFF}\u{7F}")
        json.endObject()
        #expect(json.text == #"{"reason":"a\"b\\c\u0001\u000d\u000a\u0009\u0085\u009bé✓😀\u202e\u2066\ufeff\u007f"}"#)
    }

    @Test func everyASCIIByteAtEveryOffsetRoundTrips() throws {
        for byte in UInt8(0)...UInt8(0x7F) {
            for prefix in 0..<17 {
                let text = String(repeating: "x", count: prefix) + String(UnicodeScalar(byte)) + String(repeating: "y", count: 9)
                let back = try roundTrip(text)
                #expect(back == text, "byte \(byte) after \(prefix) characters")
                let raw = written(text).utf8
                #expect(!raw.contains { $0 < 0x20 || $0 == 0x7F }, "byte \(byte) left unescaped")
            }
        }
    }

    @Test func longMixedStringsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abc\"\\\n\t\u{1}\u{7F}é✓😀 <>&;")
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 5000] {
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(try roundTrip(text) == text, "length \(length)")
        }
    }

    /// A repeated value is copied from where it was written before: the output
    /// must be exactly what writing it afresh gives, also after the buffer grew
    /// and when a slot's value changes.
    @Test func repeatedValuesComeOutAsWrittenAfresh() {
        let values: [String?] = [
            "a \"quoted\" value", "a \"quoted\" value", nil, "other\n", String(repeating: "long ", count: 500),
            "a \"quoted\" value", "other\n", "", "",
        ]
        var memoised = JSONWriter(capacity: 16)
        var plain = JSONWriter(capacity: 16)
        for writer in [0, 1] {
            for (index, value) in values.enumerated() {
                if writer == 0 {
                    memoised.string(value, repeating: index % 2)
                    memoised.string(value, repeating: 5)
                } else {
                    plain.string(value)
                    plain.string(value)
                }
            }
        }
        let memoisedText = String(decoding: memoised.bytes, as: UTF8.self)
        let plainText = String(decoding: plain.bytes, as: UTF8.self)
        #expect(memoisedText == plainText)
        #expect(plainText.contains("null"))
    }

    @Test func membersAndSeparators() throws {
        var json = JSONWriter(capacity: 16)
        json.beginObject()
        json.member("first")
        json.int(-12)
        json.member("second")
        json.null()
        json.key("third \"quoted\"")
        json.beginArray()
        json.element()
        json.int(0)
        json.element()
        json.string(nil as String?)
        json.endArray()
        json.endObject()
        json.raw("\n")
        let text = String(decoding: json.bytes, as: UTF8.self)
        #expect(text == #"{"first":-12,"second":null,"third \"quoted\"":[0,null]}"# + "\n")
    }
}
