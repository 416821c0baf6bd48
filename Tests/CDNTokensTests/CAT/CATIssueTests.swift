import Foundation
import Testing
import TokenTestSupport

@testable import CDNTokens

@Suite("CAT issuing and keys")
struct CATIssueTests {
    static let parameters = CDNIssueParameters(
        url: CATFixtures.url("https://cdn.example.com/hls/tnt/master.m3u8"),
        scope: .folder,
        now: 1_768_478_400,
        lifetime: 3600,
        leeway: 30,
        clientIP: "2001:db8::1"
    )

    @Test("an issued token verifies for its folder, and not for the folder next door")
    func issuedVerifies() throws {
        for key in [try CATFixtures.hmacKey(), try CATFixtures.es256Key()] {
            let text = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: key)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            let token = try UnverifiedCommonAccessToken(text: text)
            #expect(token.message.structure == (key.algorithm == .es256 ? .sign1 : .mac0))
            #expect(!token.message.hasCWTTag && token.message.hasCOSETag)
            #expect(token.token.cti?.count == 16)
            #expect(token.token.networkRestriction?.description == "2001:db8::1")
            var facts = CDNRequestFacts(url: CATFixtures.url("https://cdn.example.com/hls/tnt/seg-9.ts"), now: 1_768_478_400, clientIP: "2001:db8::1")
            let verified = try token.verify(keys: [key], facts: facts, expectedIssuer: "tnt")
            #expect(verified.claims == token.token.claims)
            facts.url = CATFixtures.url("https://cdn.example.com/hls/tnt2/seg-9.ts")
            #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try token.verify(keys: [key], facts: facts) } == .urlNotCovered)
        }
    }

    @Test("authenticated once, judged per request: the key first, then the claims against each request's facts")
    func authenticatedThenJudged() throws {
        for key in [try CATFixtures.hmacKey(), try CATFixtures.es256Key()] {
            let text = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: key)
            let token = try UnverifiedCommonAccessToken(text: text)
            let authenticated = try token.authenticated(by: [key])
            #expect(authenticated.token == token.token && authenticated.keyID == key.id)
            let facts = CDNRequestFacts(url: CATFixtures.url("https://cdn.example.com/hls/tnt/seg-9.ts"), now: 1_768_478_400, clientIP: "2001:db8::1")
            #expect(try authenticated.verify(facts: facts, expectedIssuer: "tnt") == token.verify(keys: [key], facts: facts, expectedIssuer: "tnt"))
            // The same reading, judged against later requests: their URL, their time, their address.
            var elsewhere = facts
            elsewhere.url = CATFixtures.url("https://cdn.example.com/hls/tnt2/seg-9.ts")
            #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try authenticated.verify(facts: elsewhere) } == .urlNotCovered)
            var later = facts
            later.now = 1_768_478_400 + 3600 + 31
            #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try authenticated.verify(facts: later) } == .tokenExpired)
            var otherAddress = facts
            otherAddress.clientIP = "2001:db8::2"
            #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try authenticated.verify(facts: otherAddress) } == .ipMismatch)
            #expect(
                CATFixtures.status { () throws(CDNRefusal) in _ = try authenticated.verify(facts: facts, expectedIssuer: "cnn") } == .invalidSignature
            )
        }
        // A key that did not make it authenticates nothing.
        let text = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: CATFixtures.hmacKey())
        let other = CATKey(insecureHMACKeyBytes: Array(repeating: 0x5A, count: 32), id: nil)
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(text: text).authenticated(by: [other]) }
                == .invalidSignature
        )
    }

    @Test("two issued tokens differ in cti (16 fresh random bytes)")
    func freshCTI() throws {
        let key = try CATFixtures.hmacKey()
        let first = try UnverifiedCommonAccessToken(text: CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: key))
        let second = try UnverifiedCommonAccessToken(text: CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: key))
        #expect(first.token.cti != second.token.cti)
    }

    @Test("reading takes base64url, Base64 with padding, and hex of the same bytes")
    func textForms() throws {
        let bytes = try CommonAccessTokenIssuer.message(Self.parameters, issuer: "tnt", key: CATFixtures.hmacKey(), cti: [1, 2]).cbor()
        let forms: [(String, CATTextEncoding)] = [
            (Data(bytes).base64EncodedString(), .base64),
            (
                Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: ""), .base64url
            ),
            (bytes.map { String(format: "%02x", $0) }.joined(), .hex), (bytes.map { String(format: "%02X", $0) }.joined() + "\n", .hex),
        ]
        for (text, encoding) in forms {
            let decoded = try CATTextEncoding.decode(text)
            #expect(decoded.bytes == bytes && decoded.encoding == encoding, "\(encoding)")
        }
    }

    @Test("issuing refuses a public key, a bad client IP and impossible times")
    func issueRefusals() throws {
        let publicKey = try CATFixtures.es256Key(id: "edge-es", file: "es256-public.pem")
        #expect(!publicKey.canIssue)
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in _ = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: publicKey) }
                == .invalidTokenFormat
        )
        let hmac = try CATFixtures.hmacKey()
        var parameters = Self.parameters
        parameters.clientIP = "192.0.2.300"
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in _ = try CommonAccessTokenIssuer.issue(parameters, issuer: "tnt", key: hmac) }
                == .invalidTokenFormat
        )
        parameters = Self.parameters
        parameters.lifetime = Int64.max
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in _ = try CommonAccessTokenIssuer.issue(parameters, issuer: "tnt", key: hmac) }
                == .invalidTokenFormat
        )
    }

    @Test(
        "HMAC keys are hex of at least 16 bytes",
        arguments: [
            (String(repeating: "ab", count: 16), true), (String(repeating: "ab", count: 16) + "\n", true),
            (String(repeating: "ab", count: 15), false),
            (String(repeating: "ab", count: 16) + "a", false), (String(repeating: "zz", count: 16), false), ("", false),
        ]
    )
    func hmacKeys(_ text: String, _ accepted: Bool) {
        #expect(((try? CATKey(hmacHex: text, id: "k")) != nil) == accepted)
    }

    @Test("a PEM key must be P-256: an RSA key is refused")
    func pemKeys() throws {
        let repository = CATFixtures.directory.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let rsa = try Data(contentsOf: repository.appendingPathComponent("Samples/keys/test-rsa2048.pem"))
        let refusal = CATFixtures.refusal { () throws(CDNRefusal) in _ = try CATKey(pem: [UInt8](rsa), id: "r", source: "rsa") }
        #expect(refusal?.status == .invalidTokenFormat && refusal?.reason.contains("P-256") == true)
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in _ = try CATKey(pem: Array("garbage".utf8), id: "x", source: "x") } == .invalidTokenFormat
        )
        #expect(try CATFixtures.es256Key().canIssue)
        #expect(try CATFixtures.es256Key().algorithm == .es256)
    }

    @Test("an ES256 token from another P-256 key is INVALID_SIGNATURE")
    func otherKey() throws {
        let text = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", key: CATFixtures.es256Key(file: "es256-other-private.pem"))
        let token = try UnverifiedCommonAccessToken(text: text)
        let publicKey = try CATFixtures.es256Key(id: "edge-es", file: "es256-public.pem")
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in
                _ = try token.verify(keys: [publicKey], facts: CDNRequestFacts(now: 1_768_478_400))
            } == .invalidSignature
        )
    }

    /// The issuer writes its claims byte by byte, without reading them back:
    /// every token it makes, from drawn parameters and options, must read as
    /// the claims those parameters call for, in the documented order, and
    /// verify with its key at the URL it covers. A renewal the reader would
    /// refuse is refused when issuing.
    @Test func whatIsIssuedReadsBackAsItsClaims() throws {
        var draws = SeededGenerator(seed: 8392)
        let keys = [try CATFixtures.hmacKey(), try CATFixtures.es256Key(), try CATFixtures.hmacKey(id: nil)]
        let paths = [
            "/hls/tnt/master.m3u8", "/a", "/", "/live/%E2%82%AC/x.mpd", "/v1/a:b@c/d;e=f/i.m3u8", "/x/" + String(repeating: "y", count: 300),
        ]
        let addresses: [String?] = [nil, "203.0.113.9", "2001:db8::1", "::ffff:192.0.2.1"]
        let renewals: [CATRenewal?] = [
            nil, CATRenewal(type: .automatic, expAdd: 600),
            CATRenewal(type: .cookie, expAdd: 900, deadline: 60, cookieName: "cta-common-access-token"),
            CATRenewal(type: .header, expAdd: 300, deadline: 0, headerName: "CTA-Common-Access-Token"),
        ]
        var issued = 0
        for _ in 0..<300 {
            let path = paths.randomElement(using: &draws)!
            let parameters = CDNIssueParameters(
                url: CATFixtures.url("https://cdn.example.com" + path),
                scope: Bool.random(using: &draws) ? .folder : .url,
                now: Int64.random(in: 1_000_000...4_000_000_000, using: &draws),
                lifetime: Int64.random(in: 1...86_400, using: &draws),
                leeway: Int64.random(in: 0...300, using: &draws),
                clientIP: addresses.randomElement(using: &draws)!
            )
            let audience: String? = Bool.random(using: &draws) ? "edge.example" : nil
            let renewal = renewals.randomElement(using: &draws)!
            let key = keys.randomElement(using: &draws)!
            let cti = (0..<Int.random(in: 1...16, using: &draws)).map { _ in UInt8.random(in: 0...255, using: &draws) }
            let text = try CommonAccessTokenIssuer.issue(parameters, issuer: "tnt", audience: audience, renewal: renewal, key: key, cti: cti)
            let read = try UnverifiedCommonAccessToken(text: text)
            var expected: [(CATClaim, CBORValue)] = [(.iss, .text("tnt"))]
            if let audience { expected.append((.aud, .text(audience))) }
            let match: CATMatchType = parameters.scope == .folder ? .prefix : .exact
            let catu = CBORValue.map([
                CBORMapEntry(
                    .integer(CATURIComponent.path.rawValue),
                    .map([CBORMapEntry(.integer(match.rawValue), .text(parameters.scope.coveredPath(of: parameters.url)))])
                )
            ])
            expected += [
                (.iat, .integer(parameters.now)), (.nbf, .integer(parameters.now - parameters.leeway)),
                (.exp, .integer(parameters.now + parameters.lifetime)), (.cti, .bytes(cti)), (.catv, .integer(1)), (.catu, catu),
            ]
            if let clientIP = parameters.clientIP {
                expected.append((.catnip, CATNetworkRestriction.claimValue(binding: try #require(CDNIPAddress(clientIP)))))
            }
            if let renewal { expected.append((.catr, renewal.claimValue)) }
            #expect(read.token.claims == expected.map { CBORMapEntry(.integer($0.0.rawValue), $0.1) })
            // Preferred serialization, as the tree writer writes the same claims.
            #expect(read.message.payload == read.token.cbor())
            #expect(read.message.cbor() == (try CATTextEncoding.decode(text).bytes))
            let facts = CDNRequestFacts(url: parameters.url, now: parameters.now, clientIP: parameters.clientIP)
            _ = try read.verify(keys: [key], facts: facts, expectedIssuer: "tnt", expectedAudience: audience)
            issued += 1
        }
        #expect(issued == 300)
        // What the reader of `catr` refuses is refused before anything is written.
        let hmac = try CATFixtures.hmacKey()
        for bad in [
            CATRenewal(type: .header, expAdd: 600, headerName: "a b"), CATRenewal(type: .cookie, expAdd: 600, cookieName: "x;y"),
            CATRenewal(type: .automatic, expAdd: -1),
        ] {
            #expect(
                CATFixtures.status { () throws(CDNRefusal) in
                    _ = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", renewal: bad, key: hmac, cti: [1])
                } == .invalidTokenFormat,
                "\(bad)"
            )
        }
    }
}
