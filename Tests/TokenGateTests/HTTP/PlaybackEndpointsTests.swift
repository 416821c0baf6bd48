import CDNTokens
import EntitlementTokens
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The playback exchange's two bodies, byte for byte: the allow's grant and
/// the refusal's `{"status","reason"}`, every string from input escaped.
@Suite struct PlaybackEndpointsTests {
    let hostile = GateFixtures.hostileText
    let escaped = GateFixtures.hostileJSON

    @Test func grantIsPinned() throws {
        let cookie = CDNCookie(
            name: "CloudFront-Policy",
            value: hostile,
            domain: ".cdn.test",
            path: "/",
            maxAge: 300,
            secure: true,
            httpOnly: false,
            sameSite: "Lax"
        )
        let grant = CDNGrant(
            profile: "edge",
            kind: .cloudfront,
            url: "https://cdn.test/a?b=c",
            expires: 1_768_500_000,
            cookies: [cookie],
            headers: [CDNField(hostile, "v")]
        )
        let expires = try #require(TokenTimestamp(millisecondsSince1970: 1_768_500_000_000)).iso8601
        let session = PlaybackExchange.OpenedSession(credential: "s.1", expires: try #require(TokenTimestamp(millisecondsSince1970: 0)))
        #expect(
            String(decoding: PlaybackEndpoints.json(grant, session: session), as: UTF8.self)
                == #"{"status":"VALID_TOKEN","profile":"edge","kind":"cloudfront","url":"https://cdn.test/a?b=c","expires":""# + expires
                + #"","cookies":[{"name":"CloudFront-Policy","value":""# + escaped
                + #"","domain":".cdn.test","path":"/","maxAge":300,"secure":true,"httpOnly":false,"sameSite":"Lax"}],"headers":{""#
                + escaped + #"":"v"},"session":"s.1","sessionExpires":""#
                + session.expires.iso8601 + #""}"# + "\n"
        )
        let bare = CDNGrant(profile: "p", kind: .akamai, url: "u", expires: 1, cookies: [], headers: [])
        #expect(String(decoding: PlaybackEndpoints.json(bare), as: UTF8.self).contains(#""cookies":[],"headers":{}}"#))
    }

    @Test func refusalBodyIsPinned() {
        #expect(
            String(decoding: PlaybackEndpoints.refusalBody(tokenStatus: "TOKEN_EXPIRED", reason: hostile), as: UTF8.self)
                == #"{"status":"TOKEN_EXPIRED","reason":""# + escaped + #""}"# + "\n"
        )
    }
}
