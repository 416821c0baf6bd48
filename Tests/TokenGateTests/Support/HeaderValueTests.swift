import HTTPTypes
import Testing

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
}

@Suite struct CredentialLocatorTests {
    @Test func queryParametersAreFoundByExactName() {
        let uri: Substring = "/hls/a.m3u8?x=1&tokenx=no&token=abc%2B&&auth=def#frag&token=zzz"
        #expect(CredentialLocator.parameters(["token"], inURI: uri) == [["abc%2B"]])
        #expect(CredentialLocator.parameters(["auth"], inURI: uri) == [["def"]])
        #expect(CredentialLocator.parameters(["x"], inURI: uri) == [["1"]])
        #expect(CredentialLocator.parameters(["frag"], inURI: uri) == [[]])
        #expect(CredentialLocator.parameters(["missing"], inURI: uri) == [[]])
        #expect(CredentialLocator.parameters(["token"], inURI: "/a?token=") == [[""]], "an empty value is a value: the decision reads it as no token")
        #expect(CredentialLocator.parameters(["token"], inURI: "/a") == [[]])
        #expect(CredentialLocator.parameters(["auth", "token"], inURI: uri) == [["def"], ["abc%2B"]])
        // A slice of a longer string, with multi-byte characters before and in the query.
        let line = "GET /é/ü.m3u8?ä=ö&token=T%C3%A9&b= HTTP/1.1"
        let target = line.dropFirst(4).prefix { $0 != " " }
        #expect(CredentialLocator.parameters(["token"], inURI: target) == [["T%C3%A9"]])
        #expect(CredentialLocator.parameters(["ä"], inURI: target) == [["ö"]])
        #expect(CredentialLocator.parameters(["b"], inURI: target) == [[""]])
        #expect(CredentialLocator.parameters(["tok"], inURI: target) == [[]])
        #expect(CredentialLocator.parameters(["token"], inURI: "?token=x") == [["x"]])
        #expect(CredentialLocator.parameters(["token"], inURI: "/a?=x&token") == [[]])
    }

    /// One pass reads every name: each name's values in the order sent, a
    /// name given twice gets the values twice, `=` inside a value stays data.
    @Test func oneScanReadsEveryNameInOrder() {
        let uri: Substring = "/s.ts?auth=A1&session=S1&token=T1&token=&auth=A2=x&session#token=no"
        let values = CredentialLocator.parameters(["token", "auth", "session", "token", "none"], inURI: uri)
        #expect(values == [["T1", ""], ["A1", "A2=x"], ["S1"], ["T1", ""], []])
        #expect(CredentialLocator.parameters(["token", "auth"], inURI: "/no-query") == [[], []])
        #expect(CredentialLocator.parameters([], inURI: uri) == [])
    }

    @Test func cookiesAreFoundByExactName() {
        var headers = HTTPFields()
        headers.append(HTTPField(name: .cookie, value: "a=1; tokengate_sessionx=no;  tokengate_session=\"abc\" "))
        headers.append(HTTPField(name: .cookie, value: "b=2"))
        #expect(CredentialLocator.cookies("tokengate_session", in: headers) == ["abc"])
        #expect(CredentialLocator.cookies("b", in: headers) == ["2"])
        #expect(CredentialLocator.cookies("c", in: headers) == [])
    }
}
