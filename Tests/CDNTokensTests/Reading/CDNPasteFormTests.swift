import EntitlementTokens
import Testing

@testable import CDNTokens

/// Every form a support engineer pastes is read as its kind and carrier,
/// with every field decoded (docs/DESIGN.md#reading-cdn-tokens-back).
@Suite struct CDNPasteFormTests {
    typealias F = ReadingFixtures

    static func read(_ text: String, kind: CDNTokenKind? = nil) throws -> CDNReading {
        do { return try CDNReading(text: text, kind: kind) } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    @Test("an EdgeAuth token in a URL's query, under each of Akamai's names")
    func akamaiURL() throws {
        let token = try F.akamai()
        for name in EdgeAuthToken.carrierNames {
            let reading = try Self.read("\(F.segment)?\(name)=\(token)")
            #expect(reading.kind == .akamai && reading.carrier == .query && reading.tokenName == name)
            #expect(reading.url?.description == "\(F.segment)?\(name)=\(token)")
            #expect(reading.fields.map(\.name) == ["st", "exp", "acl", "hmac"])
            #expect(reading.fields.first { $0.name == "acl" }?.value == "/hls/tnt/*")
            #expect(reading.expires == F.now + 600 && reading.notBefore == F.now - 30)
        }
    }

    @Test("a bare EdgeAuth token, and one copied with its name")
    func akamaiBare() throws {
        let token = try F.akamai()
        for text in [token, "  \(token)\r\n", "__token__=\(token)", "hdnts=\(token)"] {
            let reading = try Self.read(text)
            #expect(reading.kind == .akamai && reading.carrier == .bare, "\(text)")
        }
        #expect(try Self.read("hdnts=\(token)").tokenName == "hdnts")
    }

    @Test("CloudFront: a signed URL (canned and custom), Cookie and Set-Cookie lines")
    func cloudFront() throws {
        let canned = try F.cloudFront(F.parameters(scope: .url))
        let reading = try Self.read(canned.signedURL)
        #expect(reading.kind == .cloudfront && reading.carrier == .query && reading.tokenName == nil)
        #expect(reading.fields.map(\.name) == ["Expires", "Signature", "Key-Pair-Id"])

        let custom = try F.cloudFront()
        let cookieLine = "Cookie: session=abc; " + custom.cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ") + "; other=1"
        let fromCookies = try Self.read(cookieLine)
        #expect(fromCookies.kind == .cloudfront && fromCookies.carrier == .cookie)
        #expect(
            fromCookies.fields.map(\.name) == ["CloudFront-Policy", "CloudFront-Signature", "CloudFront-Key-Pair-Id", "Resource", "DateLessThan"]
        )
        #expect(fromCookies.fields.first { $0.name == "Resource" }?.value == "https://edge.example.test/hls/tnt/*")

        let setCookies =
            ([F.url] + custom.cookies.map { "Set-Cookie: \($0.name)=\($0.value); Domain=edge.example.test; Path=/hls/tnt/; Secure; HttpOnly" })
            .joined(separator: "\n")
        let fromSetCookies = try Self.read(setCookies)
        #expect(fromSetCookies.carrier == .setCookie && fromSetCookies.url?.description == F.url)
        #expect(fromSetCookies.cookieAttributes.count == 3)
        #expect(fromSetCookies.cookieAttributes.first?.value == "Domain=edge.example.test; Path=/hls/tnt/; Secure; HttpOnly")
    }

    @Test("a CAT: a header line, a cookie, a query parameter, bare as base64url, Base64 and hex")
    func cat() throws {
        let token = try F.cat()
        let bytes = try CATTextEncoding.decode(token).bytes
        // Standard Base64 is told from base64url by its '+', '/' or '=' (the fixed cti makes some).
        try #require(Base64.encode(bytes, alphabet: .standard, padded: true).contains { "+/=".contains($0) })
        let forms: [(String, CDNCarrier, String)] = [
            ("CTA-Common-Access-Token: \(token)", .header, "base64url"),
            ("cta-common-access-token:\(token)", .header, "base64url"),
            ("Cookie: a=b; cat=\(token)", .cookie, "base64url"),
            ("\(F.segment)?cat=\(token)", .query, "base64url"),
            (token, .bare, "base64url"),
            (Base64.encode(bytes, alphabet: .standard, padded: true), .bare, "base64"),
            (ByteRules.lowercaseHex(bytes), .bare, "hex"),
            (ByteRules.lowercaseHex(bytes).uppercased(), .bare, "hex"),
        ]
        for (text, carrier, encoding) in forms {
            let reading = try Self.read(text)
            #expect(reading.kind == .cat && reading.carrier == carrier, "\(text)")
            #expect(reading.fields.first { $0.name == "encoding" }?.value == encoding)
            #expect(reading.fields.first { $0.name == "iss" }?.value == "tokengate-tests")
            #expect(reading.fields.first { $0.name == "kid" }?.value == "edge-1")
            let diagnostic = try #require(reading.diagnostic)
            #expect(diagnostic.hasPrefix("17([<<{1 /alg/: 5}>>"), "\(diagnostic)")
            #expect(diagnostic.contains("312 /catu/: {3 /path/: {1 /prefix/: \"/hls/tnt/\"}}"), "\(diagnostic)")
        }
        #expect(try Self.read("CTA-Common-Access-Token: \(token)").tokenName == "CTA-Common-Access-Token")
    }

    @Test("nginx secure_link: a URL's md5 and expires, default and custom cookie names, Set-Cookie lines")
    func secureLink() throws {
        let token = try F.secureLink()
        let link = try Self.read(token.link(to: CDNURL(parsing: F.url)))
        #expect(link.kind == .nginxSecureLink && link.carrier == .query && link.fields.map(\.name) == ["md5", "expires"])
        let cookies = try Self.read("Cookie: tg_md5=\(token.md5Text); other=x; tg_expires=\(token.expires)")
        #expect(cookies.carrier == .cookie && cookies.tokenName == "tg" && cookies.expires == token.expires)
        let custom = try Self.read("Cookie: edge_md5=\(token.md5Text); edge_expires=\(token.expires)")
        #expect(custom.tokenName == "edge")
        let setCookies = try Self.read("Set-Cookie: tg_md5=\(token.md5Text); Path=/hls/tnt/\nSet-Cookie: tg_expires=\(token.expires); Path=/hls/tnt/")
        #expect(setCookies.carrier == .setCookie && setCookies.cookieAttributes.map(\.value) == ["Path=/hls/tnt/", "Path=/hls/tnt/"])
    }

    @Test("a file of pastes: a blank line ends one, a URL or a bare token starts one, cookie and header lines join")
    func records() throws {
        let token = try F.akamai()
        let text = """
            \(F.url)?__token__=\(token)
            \(F.url)
            Set-Cookie: tg_md5=x
            Set-Cookie: tg_expires=1

            Cookie: a=b
            \(token)
            CTA-Common-Access-Token: abc
            """
        let records = CDNPaste.records(in: text)
        #expect(records.map(\.line) == [1, 2, 6, 7])
        #expect(records[1].text == "\(F.url)\nSet-Cookie: tg_md5=x\nSet-Cookie: tg_expires=1")
        #expect(records[3].text == "\(token)\nCTA-Common-Access-Token: abc")
    }

    @Test("the CLI's detection: every CDN form is one, no entitlement token form is")
    func detection() throws {
        let cdn = [
            try F.akamai(), "\(F.url)?hdnea=x", try F.cloudFront().signedURL, "Cookie: CloudFront-Policy=x", "Set-Cookie: a=b",
            "CTA-Common-Access-Token: x", try F.cat(), "\(F.url)?md5=a&expires=1", "\(F.url)\nSet-Cookie: tg_md5=x",
        ]
        for text in cdn { #expect(CDNPaste.hasCDNForm(text), "\(text)") }
        let others = [
            "PHNpZ25hdHVyZUluZm8+", "https://media.test/play?token=PHN&expires=1768478400", "https://media.test/a?Signature=x",
            "<signatureInfo>abc</signatureInfo>", "https://media.test/play?token=PHNpZ24%2B",
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", #"{"serializedToken":"PD94"}"#, "Bearer PHNpZ24+", "", "\n\n",
        ]
        for text in others { #expect(!CDNPaste.hasCDNForm(text), "\(text)") }
    }
}
