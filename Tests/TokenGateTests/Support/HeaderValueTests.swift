import HTTPTypes
import Testing
import TokenTestSupport

@testable import TokenGate

@Suite struct HeaderValueTests {
    /// Whether `text` may go on the wire as a header value and decodes back.
    static func isSafe(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    static func percentDecoded(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%") {
                let hex = String(decoding: bytes.prefix(2), as: UTF8.self)
                output.append(UInt8(hex, radix: 16)!)
                bytes = bytes.dropFirst(2)
            } else {
                output.append(byte)
            }
        }
        return output
    }

    @Test func everyByteIsVisibleASCIIOrEscapedAndRoundTrips() {
        for value in 0...0xFF {
            let byte = UInt8(value)
            let encoded = HeaderValue.encode([byte, UInt8(ascii: "x"), byte])
            #expect(Self.isSafe(encoded), "byte \(value) gave \(encoded)")
            #expect(!encoded.utf8.contains(0x0D) && !encoded.utf8.contains(0x0A))
            #expect(Self.percentDecoded(encoded) == [byte, UInt8(ascii: "x"), byte], "byte \(value)")
            let plain = value > 0x20 && value < 0x7F && value != 0x25
            #expect(encoded.utf8.count == (plain ? 3 : 7), "byte \(value) gave \(encoded)")
        }
    }

    @Test(arguments: [
        "TNT\r\nSet-Cookie: session=stolen", "a\nb", "\r", "\u{0}", "Café", "Cafe\u{301}", "\u{202E}gnp.exe",
        "\u{2028}\u{2029}", "\u{FEFF}bom", "😀 emoji", "%41 stays %41", " leading and trailing ", "\u{85}NEL", "\u{7F}DEL",
    ])
    func hostileTextIsSafeAndRoundTrips(_ text: String) {
        let encoded = HeaderValue.encode(text)
        #expect(Self.isSafe(encoded))
        #expect(Self.percentDecoded(encoded) == Array(text.utf8))
    }

    @Test func plainIdsAreUnchanged() {
        #expect(HeaderValue.encode("TNT") == "TNT")
        #expect(HeaderValue.encode("Comcast_SSO") == "Comcast_SSO")
        #expect(HeaderValue.encode("2016-03-17T22:08:31Z") == "2016-03-17T22:08:31Z")
    }

    @Test func longValuesAreCutOnACharacterWithAnEllipsis() {
        let long = String(repeating: "é", count: 1000)  // 2 bytes each, 6 once encoded
        let encoded = HeaderValue.encode(long)
        #expect(encoded.utf8.count <= HeaderValue.maximumBytes)
        #expect(encoded.hasSuffix("%E2%80%A6"))
        let decoded = Self.percentDecoded(encoded)
        #expect(String(validating: decoded, as: UTF8.self) != nil, "the cut split a character")
        let exact = String(repeating: "a", count: HeaderValue.maximumBytes)
        #expect(HeaderValue.encode(exact) == exact)
        #expect(HeaderValue.encode(exact + "a").utf8.count <= HeaderValue.maximumBytes)
    }

    /// Written scalar by scalar, as the definition reads: each UTF-8 byte plain
    /// or `%XX`; when that is over the bound, the longest run of whole scalars
    /// that leaves room for the ellipsis, then the ellipsis.
    static func reference(_ text: String, maximumBytes: Int) -> String {
        func encoded(_ scalar: Unicode.Scalar) -> String {
            String(scalar).utf8.map { byte in
                byte > 0x20 && byte < 0x7F && byte != 0x25
                    ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }.joined()
        }
        let whole = text.unicodeScalars.map(encoded).joined()
        if whole.utf8.count <= maximumBytes { return whole }
        var kept = ""
        for scalar in text.unicodeScalars {
            let next = encoded(scalar)
            guard kept.utf8.count + next.utf8.count <= maximumBytes - HeaderValue.ellipsis.utf8.count else { break }
            kept += next
        }
        return kept + HeaderValue.ellipsis
    }

    @Test func drawnTextIsEscapedAndCutAsTheDefinitionReads() {
        var generator = SeededGenerator(seed: 0x4845_4144)
        let pieces = ["a", "Z", "9", " ", "%", "<", "\"", "\r\n", "\u{0}", "é", "€", "😀", "\u{202E}", "\u{7F}"]
        for _ in 0..<400 {
            let count = Int.random(in: 0...160, using: &generator)
            let text = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let bound = Int.random(in: 0...300, using: &generator)
            #expect(HeaderValue.encode(text, maximumBytes: bound) == Self.reference(text, maximumBytes: bound), "\(Array(text.utf8)) at \(bound)")
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
