import Testing

@testable import CDNTokens

/// What a paste may not be: two tokens, a name twice, a header that carries
/// no token, too much — each INVALID_TOKEN_FORMAT naming it, never a guess
/// (docs/DESIGN.md#reading-cdn-tokens-back).
@Suite struct CDNPasteRefusalTests {
    typealias F = ReadingFixtures

    static func expectRefused(
        _ text: String,
        kind: CDNTokenKind? = nil,
        naming words: String...,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        guard let refusal = F.readingRefusal(text, kind: kind) else {
            Issue.record("read, and should have been refused: \(text.prefix(120))", sourceLocation: sourceLocation)
            return
        }
        #expect(refusal.status == .invalidTokenFormat, "\(refusal)", sourceLocation: sourceLocation)
        for word in words {
            #expect(refusal.reason.contains(word), "'\(refusal.reason)' does not name '\(word)'", sourceLocation: sourceLocation)
        }
    }

    @Test("two tokens of different kinds in one paste are named, both of them")
    func twoKinds() throws {
        let akamai = try F.akamai()
        let cat = try F.cat()
        Self.expectRefused(
            "\(F.url)?__token__=\(akamai)\nCTA-Common-Access-Token: \(cat)",
            naming: "two tokens of different kinds",
            "akamai (__token__ in the URL's query)",
            "cat (CTA-Common-Access-Token in a header line)"
        )
        Self.expectRefused("Cookie: __token__=\(akamai); cat=\(cat)", naming: "akamai", "cat")
        Self.expectRefused("Cookie: tg_md5=x; tg_expires=1; CloudFront-Signature=y", naming: "cloudfront", "nginx-secure-link")
        Self.expectRefused("\(F.url)?__token__=\(akamai)\n\(cat)", naming: "akamai", "cat (a bare token)")
    }

    @Test("a name given twice, two of a kind's names, a token in two carriers")
    func namesTwice() throws {
        let akamai = try F.akamai()
        let cat = try F.cat()
        Self.expectRefused("\(F.url)?__token__=\(akamai)&__token__=\(akamai)", naming: "'__token__' is given 2 times in the URL's query")
        Self.expectRefused("Cookie: cat=\(cat); cat=\(cat)", naming: "'cat' is given 2 times in a Cookie line")
        Self.expectRefused("Cookie: __token__=\(akamai); hdnts=\(akamai)", naming: "two akamai tokens", "__token__, hdnts")
        Self.expectRefused("\(F.url)?__token__=\(akamai)\nCookie: __token__=\(akamai)", naming: "the URL's query and a Cookie line")
        let cloudFront = try F.cloudFront()
        Self.expectRefused(
            cloudFront.signedURL + "\nCookie: " + cloudFront.cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; "),
            naming: "the URL's query and a Cookie line"
        )
        Self.expectRefused(
            "Cookie: " + (cloudFront.cookies + [cloudFront.cookies[1]]).map { "\($0.name)=\($0.value)" }.joined(separator: "; "),
            naming: "'CloudFront-Signature' appears twice"
        )
        let link = try F.secureLink()
        Self.expectRefused(
            "Cookie: a_md5=\(link.md5Text); a_expires=\(link.expires); b_md5=\(link.md5Text); b_expires=\(link.expires)",
            naming: "two secure_link tokens",
            "a_md5",
            "b_md5"
        )
        Self.expectRefused(
            "Cookie: tg_md5=\(link.md5Text); tg_md5=\(link.md5Text); tg_expires=\(link.expires)",
            naming: "tg_md5 is given more than once"
        )
    }

    @Test("two URLs or two bare tokens in one paste")
    func twoOfALine() throws {
        let akamai = try F.akamai()
        Self.expectRefused("\(F.url)\n\(F.segment)", naming: "two URLs", "line 2")
        Self.expectRefused("\(akamai)\n\(akamai)", naming: "two bare tokens", "line 2")
    }

    @Test("a header line that carries no CDN token, a bare line of no CDN form, a paste with no token")
    func notATokenLine() throws {
        Self.expectRefused("Authorization: Bearer x", naming: "'Authorization'", "carries no CDN token")
        Self.expectRefused("PHNpZ25hdHVyZUluZm8+", naming: "is not a CDN token")
        Self.expectRefused(F.url, naming: "no CDN token in the paste", "__token__", "Key-Pair-Id")
        Self.expectRefused("Cookie: a=b", kind: .cat, naming: "no cat token")
        Self.expectRefused(try F.akamai(), kind: .cloudfront, naming: "the bare token is akamai", "not cloudfront")
        Self.expectRefused("Cookie: =x", naming: "a cookie without a name")
        Self.expectRefused("Cookie: ;;", naming: "holds no cookie")
        Self.expectRefused("http://a b", naming: "the URL on line 1")
    }

    @Test("bounded: a paste over 64 KiB, more than 64 cookies")
    func limits() throws {
        Self.expectRefused(String(repeating: "a", count: CDNPaste.maximumBytes + 1), naming: "at most 65536")
        let cookies = (0...CDNPaste.maximumCookies).map { "c\($0)=v" }.joined(separator: "; ")
        Self.expectRefused("Cookie: " + cookies, naming: "more than 64 cookies")
        let setCookies = (0...CDNPaste.maximumCookies).map { "Set-Cookie: c\($0)=v" }.joined(separator: "\n")
        Self.expectRefused(setCookies, naming: "more than 64 cookies")
        // At the limit, read.
        #expect(
            F.readingRefusal("Cookie: " + (1..<CDNPaste.maximumCookies).map { "c\($0)=v" }.joined(separator: "; ") + "; cat=\(try F.cat())") == nil
        )
    }

    @Test("a forced kind reads what detection would not, and its reader says what is wrong")
    func forcedKind() throws {
        Self.expectRefused("st=1~exp=2", kind: .akamai, naming: "without hmac")
        Self.expectRefused("not a cat!", kind: .cat, naming: "base64url, Base64 or hex")
        // The kind asked for: other kinds' names are not looked at.
        #expect(F.readingRefusal("Cookie: __token__=\(try F.akamai()); cat=\(try F.cat())", kind: .cat) == nil)
    }
}
