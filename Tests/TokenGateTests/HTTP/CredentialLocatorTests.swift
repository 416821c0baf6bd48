import HTTPTypes
import Testing
import TokenTestSupport

@testable import TokenGate

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

    /// The query read as the definition reads it, a byte at a time: the query
    /// runs from the first `?` to the first `#`, pairs end at `&`, a name at
    /// its pair's first `=`. The reading by byte search must agree with it.
    static func reference(_ names: [String], inURI uri: Substring) -> [[Substring]] {
        var values = [[Substring]](repeating: [], count: names.count)
        let bytes = Array(uri.utf8)
        guard let mark = bytes.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
            bytes[mark] == UInt8(ascii: "?")
        else { return values }
        let queryEnd = bytes[(mark + 1)...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        var start = mark + 1
        while start < queryEnd {
            let pairEnd = bytes[start..<queryEnd].firstIndex(of: UInt8(ascii: "&")) ?? queryEnd
            if let equals = bytes[start..<pairEnd].firstIndex(of: UInt8(ascii: "=")) {
                for (which, name) in names.enumerated() where bytes[start..<equals].elementsEqual(name.utf8) {
                    let utf8 = uri.utf8
                    values[which].append(uri[utf8.index(utf8.startIndex, offsetBy: equals + 1)..<utf8.index(utf8.startIndex, offsetBy: pairEnd)])
                }
            }
            start = pairEnd + 1
        }
        return values
    }

    @Test func drawnQueriesAreReadAsTheDefinitionReads() {
        var generator = SeededGenerator(seed: 0x7175_6572)
        let pieces = ["token", "auth", "t", "=", "=", "&", "&", "#", "?", "%23", "%26", "/", "é", "\u{301}", "x", "1"]
        let names = ["token", "auth", "t", "", "é"]
        for _ in 0..<3_000 {
            let count = Int.random(in: 0...24, using: &generator)
            let text = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            // Half of them inside a longer string, as a request line's target is.
            let uri: Substring = Bool.random(using: &generator) ? text[...] : ("GET " + text + " HTTP/1.1").dropFirst(4).dropLast(9)
            #expect(CredentialLocator.parameters(names, inURI: uri) == Self.reference(names, inURI: uri), "\(uri)")
        }
        // A kilobyte token, in every place a pair can stand.
        let token = String(repeating: "PHNpZ25hdHVyZUluZm8-", count: 64)
        for uri: Substring in ["/s.ts?token=\(token)", "/s.ts?a=1&token=\(token)&b", "/s.ts?token=\(token)#&token=x", "/s.ts?\(token)&token="] {
            #expect(CredentialLocator.parameters(names, inURI: uri) == Self.reference(names, inURI: uri))
        }
    }

    @Test func cookiesAreFoundByExactName() {
        var headers = HTTPFields()
        headers.append(HTTPField(name: .cookie, value: "a=1; tokengate_sessionx=no;  tokengate_session=\"abc\" "))
        headers.append(HTTPField(name: .cookie, value: "b=2"))
        #expect(CredentialLocator.cookies("tokengate_session", in: headers) == ["abc"])
        #expect(CredentialLocator.cookies("b", in: headers) == ["2"])
        #expect(CredentialLocator.cookies("c", in: headers) == [])
    }

    /// The request's path ends at the byte where the query is read from: a `?`
    /// or `#` followed by a combining mark is one `Character` that is neither,
    /// and read by characters the path ran on into the query.
    @Test func thePathEndsWhereTheQueryBegins() {
        let cases: [(Substring, Substring)] = [
            ("/hls/a.ts?\u{301}token=T1", "/hls/a.ts"),
            ("/hls/a.ts#\u{301}?token=T1", "/hls/a.ts"),
            ("/hls/e\u{301}.ts?token=T1", "/hls/e\u{301}.ts"),
            ("/hls/a.ts", "/hls/a.ts"),
            ("?token=T1", ""),
        ]
        for (uri, path) in cases {
            #expect(GateRoute.path(of: uri) == path, "\(uri)")
        }
        #expect(CredentialLocator.parameters(["\u{301}token"], inURI: cases[0].0) == [["T1"]])
    }
}
