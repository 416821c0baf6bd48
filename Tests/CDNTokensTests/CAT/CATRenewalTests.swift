import Foundation
import Testing

@testable import CDNTokens

/// `catr` (CTA-5007 claim 323, docs/CDN.md#renewal-catr): read strictly into
/// ``CATRenewal``, written by a `cat` profile's `renewal` settings, and renewed
/// with a new `cti`, `iat` and `exp`.
@Suite("CAT renewal (catr)")
struct CATRenewalTests {
    static let now: Int64 = 1_768_478_400
    static let parameters = CDNIssueParameters(
        url: CATFixtures.url("https://cdn.example.com/hls/tnt/master.m3u8"),
        scope: .folder,
        now: now,
        lifetime: 600,
        leeway: 30
    )

    static func entry(_ label: Int64, _ value: CBORValue) -> CBORMapEntry { CBORMapEntry(.integer(label), value) }

    /// A token holding `catr` as given.
    static func token(catr: CBORValue) throws(CDNRefusal) -> CommonAccessToken {
        let claims = try CommonAccessTokenIssuer.claims(for: parameters, issuer: "tnt", cti: [1, 2, 3]).claims
        return try CommonAccessToken(claims: claims + [entry(CATClaim.catr.rawValue, catr)])
    }

    @Test("every label of CTA-5007 reads into its field; deadline defaults to 60 s")
    func readsEveryLabel() throws {
        let full = try Self.token(
            catr: .map([
                Self.entry(0, .integer(1)), Self.entry(1, .integer(3600)), Self.entry(2, .integer(120)), Self.entry(3, .text("cta-cat")),
                Self.entry(4, .text("X-CAT")), Self.entry(5, .array([.text("Path=/"), .text("Secure")])), Self.entry(6, .text("a=1")),
                Self.entry(7, .integer(307)),
            ])
        )
        let renewal = try #require(full.renewal)
        #expect(renewal.type == .cookie && renewal.expAdd == 3600 && renewal.deadline == 120)
        #expect(renewal.cookieName == "cta-cat" && renewal.headerName == "X-CAT")
        #expect(renewal.cookieParams == ["Path=/", "Secure"] && renewal.headerParams == ["a=1"] && renewal.code == 307)
        #expect(full.renewalWindow == (Self.now + 600 - 120)..<(Self.now + 600))
        let minimal = try #require(try Self.token(catr: .map([Self.entry(0, .integer(0)), Self.entry(1, .integer(60))])).renewal)
        #expect(minimal.type == .automatic && minimal.deadline == CATRenewal.defaultDeadline && minimal.cookieName == nil)
        // node-cat wraps every map in tag 259; it changes nothing.
        let tagged = try Self.token(catr: .tagged(259, .map([Self.entry(0, .integer(2)), Self.entry(1, .integer(60))])))
        #expect(tagged.renewal?.type == .header)
        #expect(full.diagnostic.contains("323 /catr/: {0 /type/: 1, 1 /expadd/: 3600, 2 /deadline/: 120, 3 /cookie-name/: \"cta-cat\""))
    }

    @Test(
        "a catr that is not CTA-5007's makes the token unreadable, naming why",
        arguments: [
            (CBORValue.integer(1), "not a map"),
            (.map([CBORMapEntry(.integer(1), .integer(60))]), "no type"),
            (.map([CBORMapEntry(.integer(0), .integer(1))]), "no expadd"),
            (.map([CBORMapEntry(.integer(0), .integer(4)), CBORMapEntry(.integer(1), .integer(60))]), "catr type is 4"),
            (.map([CBORMapEntry(.integer(0), .text("cookie")), CBORMapEntry(.integer(1), .integer(60))]), "catr type is \"cookie\""),
            (.map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(0))]), "a positive number of seconds"),
            (.map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .text("60"))]), "catr expadd"),
            (
                .map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(2), .integer(-1))]),
                "catr deadline"
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(8), .integer(1))]),
                "label 8"
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.text("type"), .integer(1))]),
                "label \"type\""
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(3), .text("a b"))]),
                "catr cookie-name"
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(2)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(4), .text("X\r\nY"))]),
                "catr header-name"
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(1)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(5), .integer(1))]),
                "catr cookie-params"
            ),
            (
                .map([CBORMapEntry(.integer(0), .integer(3)), CBORMapEntry(.integer(1), .integer(60)), CBORMapEntry(.integer(7), .integer(200))]),
                "catr code"
            ),
        ]
    )
    func strict(catr: CBORValue, expected: String) {
        do {
            _ = try Self.token(catr: catr)
            Issue.record("read: \(catr.diagnostic())")
        } catch {
            #expect(error.status == .invalidTokenFormat)
            #expect(error.reason.contains(expected), "\(error.reason)")
        }
    }

    @Test("the window is exp − deadline ≤ now < exp")
    func window() {
        let renewal = CATRenewal(type: .header, expAdd: 600, deadline: 60)
        let window = renewal.window(expires: 1000)
        #expect(!window.contains(939) && window.contains(940) && window.contains(999) && !window.contains(1000))
        #expect(CATRenewal(type: .header, expAdd: 600, deadline: 0).window(expires: 1000).isEmpty)
        #expect(CATRenewal(type: .header, expAdd: 600, deadline: Int64.max).window(expires: -10).lowerBound == Int64.min)
    }

    @Test("the issuer writes catr as {0: type, 1: expadd, 2: deadline, 3 | 4: name}, and reads it back")
    func issued() throws {
        let key = try CATFixtures.hmacKey()
        let renewal = CATRenewal(type: .header, expAdd: 900, deadline: 90, headerName: "CTA-Common-Access-Token")
        let text = try CommonAccessTokenIssuer.issue(Self.parameters, issuer: "tnt", renewal: renewal, key: key)
        let token = try UnverifiedCommonAccessToken(text: text)
        #expect(token.token.renewal == renewal)
        #expect(
            token.token.value(of: .catr)
                == .map([
                    Self.entry(0, .integer(2)), Self.entry(1, .integer(900)), Self.entry(2, .integer(90)),
                    Self.entry(4, .text("CTA-Common-Access-Token")),
                ])
        )
        #expect(token.token.claims.last?.key == .integer(CATClaim.catr.rawValue))
        #expect(CATClaim.catr.isUnjudgedRestriction == false)
        let facts = CDNRequestFacts(url: CATFixtures.url("https://cdn.example.com/hls/tnt/seg-1.ts"), now: Self.now)
        _ = try token.verify(keys: [key], facts: facts, expectedIssuer: "tnt")
    }

    @Test("a renewal keeps every claim and its place, with a new cti, iat = now and exp = now + expadd")
    func renewed() throws {
        for key in [try CATFixtures.hmacKey(), try CATFixtures.es256Key()] {
            let renewal = CATRenewal(type: .cookie, expAdd: 900, deadline: 60, cookieName: "cat")
            let original = try CommonAccessTokenIssuer.claims(for: Self.parameters, issuer: "tnt", renewal: renewal, cti: [9, 9])
            let later = Self.now + 560
            let text = try CommonAccessTokenIssuer.renewal(of: original, now: later, key: key, cti: Array(repeating: 7, count: 16))
            let token = try UnverifiedCommonAccessToken(text: text)
            #expect(token.token.claims.map(\.key) == original.claims.map(\.key))
            #expect(token.token.cti == Array(repeating: 7, count: 16))
            #expect(token.token.issuedAt == later && token.token.expires == later + 900)
            #expect(token.token.notBefore == original.notBefore && token.token.issuer == "tnt" && token.token.renewal == renewal)
            #expect(token.token.uriRestriction == original.uriRestriction)
            let facts = CDNRequestFacts(url: CATFixtures.url("https://cdn.example.com/hls/tnt/seg-1.ts"), now: later + 800)
            _ = try token.verify(keys: [key], facts: facts, expectedIssuer: "tnt")
        }
        // No catr: nothing asks for a renewal.
        let plain = try CommonAccessTokenIssuer.claims(for: Self.parameters, issuer: "tnt", cti: [1])
        #expect(
            CATFixtures.status { () throws(CDNRefusal) in
                _ = try CommonAccessTokenIssuer.renewal(of: plain, now: Self.now, key: try! CATFixtures.hmacKey(), cti: [2])
            } == .invalidTokenFormat
        )
    }

    static let profileBase = """
        name = edge
        kind = cat
        key = edge.key edge-1
        resource = TNT https://cdn.example.com/hls/tnt/master.m3u8
        lifetime = 600
        """

    static func profile(_ lines: String) throws(CDNProfileError) -> CDNProfile {
        let settings = try CDNProfileSettings(text: profileBase + "\n" + lines, source: "edge.profile")
        return try CDNProfile(settings: settings, defaults: CDNProfileDefaults(lifetime: 3600, leeway: 30)) { _ throws(CDNProfileError) in
            Array((try? CATFixtures.hmacHex)?.utf8 ?? "".utf8)
        }
    }

    @Test(
        "a cat profile's renewal settings write catr, with their defaults",
        arguments: [
            ("renewal = automatic", CATRenewal(type: .automatic, expAdd: 600, deadline: 60)),
            ("renewal = cookie", CATRenewal(type: .cookie, expAdd: 600, deadline: 60, cookieName: "cat")),
            ("renewal = header", CATRenewal(type: .header, expAdd: 600, deadline: 60, headerName: "CTA-Common-Access-Token")),
            ("renewal = redirect\nrenewal-exp-add = 1200\nrenewal-deadline = 30", CATRenewal(type: .redirect, expAdd: 1200, deadline: 30)),
            ("renewal = cookie\nrenewal-name = cta_cat", CATRenewal(type: .cookie, expAdd: 600, deadline: 60, cookieName: "cta_cat")),
            ("renewal = header\nrenewal-name = X-Renewed-CAT", CATRenewal(type: .header, expAdd: 600, deadline: 60, headerName: "X-Renewed-CAT")),
        ]
    )
    func profileWritesCatr(lines: String, expected: CATRenewal) throws {
        let profile = try Self.profile(lines)
        #expect(profile.renewal == expected)
        let grant = try profile.issue(resource: "TNT", now: Self.now, clientIP: nil, requestor: "tnt")
        let token = try UnverifiedCommonAccessToken(text: try #require(grant.cookies.first?.value))
        #expect(token.token.renewal == expected)
        #expect(token.token.value(of: .catr) == expected.claimValue)
    }

    @Test(
        "inconsistent renewal settings are refused at load, naming the line",
        arguments: [
            ("renewal-exp-add = 600", "edge.profile:6: renewal-exp-add without renewal"),
            ("renewal = sometimes", "edge.profile:6: renewal takes automatic, cookie, header or redirect"),
            ("renewal = header\nrenewal-exp-add = 0", "edge.profile:7: renewal-exp-add takes seconds, from 1 to 86400"),
            ("renewal = header\nrenewal-deadline = -1", "renewal-deadline takes seconds"),
            (
                "renewal = header\nrenewal-exp-add = 60\nrenewal-deadline = 60",
                "edge.profile:8: renewal-deadline 60 s is not less than renewal-exp-add 60 s"
            ),
            ("renewal = header\nrenewal-deadline = 600", "renewal-deadline 600 s is not less than the renewal-exp-add of 600 s"),
            ("renewal = automatic\nrenewal-name = cat", "edge.profile:7: renewal-name names the cookie"),
            ("renewal = cookie\nrenewal-name = a;b", "renewal-name 'a;b' is not letters, digits, '-' and '_'"),
            ("renewal = header\nrenewal-name = X_CAT", "renewal-name 'X_CAT' is not letters, digits, '-' (at most 64)"),
        ]
    )
    func profileRefuses(lines: String, expected: String) {
        do {
            _ = try Self.profile(lines)
            Issue.record("loaded: \(lines)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test("renewal settings are for kind cat only")
    func otherKinds() {
        let akamai = """
            name = edge
            kind = akamai
            key = edge.key
            resource = TNT https://cdn.example.com/hls/tnt/master.m3u8
            renewal = cookie
            """
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: akamai, source: "a.profile") }
        do { _ = try CDNProfileSettings(text: akamai, source: "a.profile") } catch {
            #expect(error.message.contains("a.profile:5: renewal is for kind cat only"), "\(error.message)")
        }
    }
}
