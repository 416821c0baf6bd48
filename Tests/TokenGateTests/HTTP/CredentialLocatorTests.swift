import HTTPTypes
import Testing

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
