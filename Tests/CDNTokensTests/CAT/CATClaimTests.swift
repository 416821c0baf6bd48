import EntitlementTokens
import Testing

@testable import CDNTokens

/// The claims judged at the origin, and the ones refused by name.
@Suite("CAT claims")
struct CATClaimTests {
    static let now: Int64 = 1_768_478_400
    let key = try! CATFixtures.hmacKey()

    /// A token with `claims`, MAC'd with the fixture key, then verified against `facts`.
    func status(
        _ claims: [CBORMapEntry],
        url: String? = "https://cdn.example.com/hls/tnt/seg-1.ts",
        now: Int64 = now,
        clientIP: String? = nil,
        method: String = "GET",
        leeway: Int64 = 30,
        issuer: String? = nil
    ) -> CDNRefusal? {
        let unsigned = COSEMessage(
            structure: .mac0,
            protectedHeader: [CBORMapEntry(.integer(1), .integer(5))],
            unprotectedHeader: [CBORMapEntry(.integer(4), .bytes(Array("edge-1".utf8)))],
            payload: CBORValue.map(claims).cbor(),
            authenticationTag: []
        )
        let facts = CDNRequestFacts(url: url.map(CATFixtures.url), now: now, clientIP: clientIP, method: method, leeway: leeway)
        return CATFixtures.refusal { () throws(CDNRefusal) in
            let message = unsigned.with(authenticationTag: try CATAuthentication.authenticate(unsigned, with: key))
            _ = try UnverifiedCommonAccessToken(cbor: message.cbor()).verify(keys: [key], facts: facts, expectedIssuer: issuer)
        }
    }

    static func claim(_ claim: CATClaim, _ value: CBORValue) -> CBORMapEntry { CBORMapEntry(.integer(claim.rawValue), value) }

    static func catu(_ component: CATURIComponent, _ match: CATMatchType, _ value: CBORValue) -> CBORMapEntry {
        claim(.catu, .map([CBORMapEntry(.integer(component.rawValue), .map([CBORMapEntry(.integer(match.rawValue), value)]))]))
    }

    @Test(
        "URI components are cut as docs/DESIGN.md says",
        arguments: [
            (
                "https://h.example:8443/hls/tnt/seg.1.ts?a=1",
                ["https", "h.example", "8443", "/hls/tnt/seg.1.ts", "a=1", "/hls/tnt", "seg.1.ts", "seg.1", ".ts"]
            ),
            ("http://h.example/", ["http", "h.example", "80", "/", "", "", "", "", ""]),
            ("https://h.example/README", ["https", "h.example", "443", "/README", "", "", "README", "README", ""]),
        ]
    )
    func components(_ url: String, _ expected: [String]) {
        #expect(CATURIComponent.allCases.map { $0.value(of: CATFixtures.url(url)) } == expected)
    }

    @Test(
        "catu match types",
        arguments: [
            (CATURIComponent.path, CATMatchType.exact, CBORValue.text("/hls/tnt/seg-1.ts"), true),
            (.path, .exact, .text("/hls/tnt/seg-1.t"), false),
            (.path, .prefix, .text("/hls/tnt/"), true), (.path, .prefix, .text("/hls/tnt2/"), false),
            (.filename, .suffix, .text("-1.ts"), true), (.filename, .suffix, .text("-2.ts"), false),
            (.path, .contains, .text("tnt/seg"), true), (.path, .contains, .text("tnt/segment"), false),
            (.host, .exact, .text("cdn.example.com"), true), (.scheme, .exact, .text("http"), false),
            (.stem, .exact, .text("seg-1"), true), (.fileExtension, .exact, .text(".ts"), true), (.parentPath, .exact, .text("/hls/tnt"), true),
            (.path, .sha256, .bytes(ForeignDigest.sha256.digest(of: Array("/hls/tnt/seg-1.ts".utf8))!), true),
            (.path, .sha256, .bytes(ForeignDigest.sha256.digest(of: Array("/hls/tnt/seg-2.ts".utf8))!), false),
            (.path, .sha512_256, .bytes(ForeignDigest.sha512_256.digest(of: Array("/hls/tnt/seg-1.ts".utf8))!), true),
            (.path, .sha512_256, .bytes(Array(ForeignDigest.sha512.digest(of: Array("/hls/tnt/seg-1.ts".utf8))!.prefix(32))), false),
        ]
    )
    func matches(_ component: CATURIComponent, _ match: CATMatchType, _ value: CBORValue, _ covered: Bool) {
        let refusal = status([Self.catu(component, match, value)])
        #expect(refusal?.status == (covered ? nil : .urlNotCovered))
        if let refusal {
            #expect(refusal.reason.contains(component.name) && refusal.reason.contains("https://cdn.example.com/hls/tnt/seg-1.ts"))
        }
    }

    @Test("every match written for a component must hold")
    func allMatchesHold() {
        let both = Self.claim(
            .catu,
            .map([CBORMapEntry(.integer(3), .map([CBORMapEntry(.integer(1), .text("/hls/")), CBORMapEntry(.integer(2), .text(".m3u8"))]))])
        )
        #expect(status([both])?.status == .urlNotCovered)
        #expect(status([both], url: "https://cdn.example.com/hls/index.m3u8") == nil)
    }

    @Test("catu regex, unknown components and unknown match types are UNSUPPORTED_CLAIM")
    func catuUnsupported() {
        let regex = status([Self.catu(.path, .regex, .text("(a+)+$"))])
        #expect(regex?.status == .unsupportedClaim && regex?.reason.contains("catu regex match") == true)
        let component = status([Self.claim(.catu, .map([CBORMapEntry(.integer(9), .map([CBORMapEntry(.integer(0), .text("x"))]))]))])
        #expect(component?.status == .unsupportedClaim)
        let match = status([Self.claim(.catu, .map([CBORMapEntry(.integer(3), .map([CBORMapEntry(.integer(7), .text("x"))]))]))])
        #expect(match?.status == .unsupportedClaim)
    }

    @Test("catu is not judged when no URL is given")
    func catuWithoutURL() {
        #expect(status([Self.catu(.path, .exact, .text("/x"))], url: nil) == nil)
    }

    @Test("catm against the method, case-insensitively, one name or a list")
    func methods() {
        #expect(status([Self.claim(.catm, .array([.text("GET"), .text("HEAD")]))]) == nil)
        #expect(status([Self.claim(.catm, .text("get"))]) == nil)
        let refusal = status([Self.claim(.catm, .array([.text("GET")]))], method: "POST")
        #expect(refusal?.status == .urlNotCovered && refusal?.reason.contains("\"POST\"") == true)
    }

    static let network = claim(
        .catnip,
        .array([
            .tagged(52, .array([.integer(24), .bytes([198, 51, 100])])), .tagged(54, .bytes(CDNIPAddress("2001:db8::7")!.bytes)),
            .tagged(52, .bytes([192, 0, 2, 1])),
        ])
    )

    @Test(
        "catnip: addresses and RFC 9164 prefixes",
        arguments: [
            ("198.51.100.200", nil), ("198.51.101.1", CDNStatus.ipMismatch), ("192.0.2.1", nil), ("192.0.2.2", .ipMismatch),
            ("2001:db8::7", nil), ("[2001:db8:0:0:0:0:0:7]", nil), ("2001:db8::8", .ipMismatch), ("::ffff:192.0.2.1", nil),
            ("not-an-ip", .ipMismatch), ("192.0.2.01", .ipMismatch),
        ] as [(String, CDNStatus?)]
    )
    func catnip(_ clientIP: String, _ expected: CDNStatus?) {
        #expect(status([Self.network], clientIP: clientIP)?.status == expected)
    }

    @Test("catnip with no client IP known is IP_MISMATCH")
    func catnipWithoutClient() {
        let refusal = status([Self.network], clientIP: nil)
        #expect(refusal?.status == .ipMismatch && refusal?.reason.contains("not known") == true)
    }

    @Test("catnip naming an AS number is UNSUPPORTED_CLAIM unless an address matches")
    func catnipAutonomousSystem() {
        let asn = Self.claim(.catnip, .array([.integer(64496), .tagged(52, .bytes([192, 0, 2, 1]))]))
        #expect(status([asn], clientIP: "192.0.2.1") == nil)
        #expect(status([asn], clientIP: "192.0.2.9")?.status == .unsupportedClaim)
    }

    @Test("catnip prefixes in the interface form or too long are refused as INVALID_TOKEN_FORMAT")
    func catnipMalformed() {
        #expect(
            status([Self.claim(.catnip, .tagged(52, .array([.bytes([192, 0, 2, 1]), .integer(24)])))], clientIP: "192.0.2.1")?.status
                == .invalidTokenFormat
        )
        #expect(
            status([Self.claim(.catnip, .tagged(52, .array([.integer(33), .bytes([192])])))], clientIP: "192.0.2.1")?.status == .invalidTokenFormat
        )
        #expect(status([Self.claim(.catnip, .tagged(52, .bytes([1, 2, 3])))], clientIP: "192.0.2.1")?.status == .invalidTokenFormat)
    }

    @Test(
        "IP addresses are read strictly",
        arguments: [
            ("192.0.2.1", "192.0.2.1"), ("::", "::"), ("::1", "::1"), ("1::", "1::"),
            ("2001:DB8::a:b", "2001:db8::a:b"), ("::ffff:198.51.100.7", "198.51.100.7"), ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"),
        ]
    )
    func addresses(_ text: String, _ expected: String) {
        #expect(CDNIPAddress(text)?.description == expected)
    }

    @Test(
        "bad IP text is refused",
        arguments: [
            "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1::2::3", ":::", "1:2:3:4:5:6:7:8:9", "12345::", "fe80::1%eth0", "1:2:3:4:5:6:7::8:9",
            "::1.2.3",
        ]
    )
    func badAddresses(_ text: String) {
        #expect(CDNIPAddress(text) == nil)
    }

    @Test("exp and nbf with the leeway, at the boundaries")
    func times() {
        let exp = Self.claim(.exp, .integer(Self.now))
        #expect(status([exp], now: Self.now + 30) == nil)
        #expect(status([exp], now: Self.now + 31)?.status == .tokenExpired)
        #expect(status([exp], now: Self.now + 1, leeway: 0)?.status == .tokenExpired)
        let nbf = Self.claim(.nbf, .integer(Self.now))
        #expect(status([nbf], now: Self.now - 30) == nil)
        #expect(status([nbf], now: Self.now - 31)?.status == .tokenNotYetValid)
        #expect(status([Self.claim(.exp, .integer(Int64.min))], now: Int64.max)?.status == .tokenExpired)
        #expect(status([Self.claim(.nbf, .integer(Int64.max))], now: Int64.min)?.status == .tokenNotYetValid)
    }

    @Test("catv must be 1; iss must be the expected issuer")
    func versionAndIssuer() {
        #expect(status([Self.claim(.catv, .integer(1))]) == nil)
        #expect(status([Self.claim(.catv, .integer(2))])?.status == .unsupportedClaim)
        #expect(status([Self.claim(.iss, .text("tnt"))], issuer: "tnt") == nil)
        #expect(status([Self.claim(.iss, .text("tnt2"))], issuer: "tnt")?.status == .invalidSignature)
        #expect(status([], issuer: "tnt")?.status == .invalidSignature)
    }

    @Test(
        "claims that restrict the request and are not judged are refused by name",
        arguments: CATClaim.allCases.filter(\.isUnjudgedRestriction)
    )
    func unjudged(_ claim: CATClaim) {
        let refusal = status([Self.claim(claim, .array([.text("x")]))])
        #expect(refusal?.status == .unsupportedClaim)
        #expect(refusal?.reason.hasPrefix(claim.name) == true)
    }

    @Test("unknown claim keys are refused (one may restrict); catr, catifdata, sub, iat are read and pass")
    func unknownClaims() {
        #expect(status([CBORMapEntry(.integer(999), .integer(1))])?.reason.hasPrefix("claim 999") == true)
        #expect(status([CBORMapEntry(.text("region"), .text("eu"))])?.status == .unsupportedClaim)
        #expect(
            status([Self.claim(.catr, .null), Self.claim(.catifdata, .text("x")), Self.claim(.sub, .text("s")), Self.claim(.iat, .integer(1))]) == nil
        )
    }

    @Test("catreplay and cti are exposed on the verified token")
    func replay() throws {
        let message = try CommonAccessTokenIssuer.message(
            CDNIssueParameters(url: CATFixtures.url("https://a.example/x/y.ts"), scope: .folder, now: Self.now, lifetime: 60),
            issuer: "i",
            key: key,
            cti: [9, 9]
        )
        let verified = try UnverifiedCommonAccessToken(cbor: message.cbor()).verify(keys: [key], facts: CDNRequestFacts(now: Self.now))
        #expect(verified.cti == [9, 9])
        #expect(verified.replay == nil)
        let prohibited = try CommonAccessToken(claims: [Self.claim(.catreplay, .integer(1)), Self.claim(.cti, .bytes([1]))])
        #expect(prohibited.replay == .prohibited)
    }

    @Test("fields show each claim as raw text")
    func fields() throws {
        let token = try CommonAccessToken(claims: [
            Self.claim(.iss, .text("a\nb")), Self.claim(.cti, .bytes([0xAB])), Self.claim(.exp, .integer(5)),
            Self.catu(.path, .prefix, .text("/x/")), CBORMapEntry(.integer(999), .bool(true)),
        ])
        #expect(
            token.fields == [
                CDNField("iss", "a\nb"), CDNField("cti", "ab"), CDNField("exp", "5"),
                CDNField("catu", "{3 /path/: {1 /prefix/: \"/x/\"}}"), CDNField("claim 999", "true"),
            ]
        )
    }
}
