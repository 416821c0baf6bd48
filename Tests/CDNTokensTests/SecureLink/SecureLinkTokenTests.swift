import Testing

@testable import CDNTokens

/// The token's two values, its carriers, and what the reader refuses.
@Suite struct SecureLinkTokenTests {
    static let md5 = "_e4Nc3iduzkWRm01TBBNYw"

    @Test("query string, cookies and the link a query carrier hands out")
    func carriers() throws {
        let token = try SecureLinkToken(md5: Self.md5, expires: "2147483647")
        #expect(token.fields == [CDNField("md5", Self.md5), CDNField("expires", "2147483647")])
        #expect(token.queryString == "md5=_e4Nc3iduzkWRm01TBBNYw&expires=2147483647")
        #expect(try token.cookies() == [CDNField("tg_md5", Self.md5), CDNField("tg_expires", "2147483647")])
        #expect(try token.cookies(tokenName: "edge_1") == [CDNField("edge_1_md5", Self.md5), CDNField("edge_1_expires", "2147483647")])
        #expect(
            token.link(to: try CDNURL(parsing: "https://e.example.test/s/link")) == "https://e.example.test/s/link?md5=\(Self.md5)&expires=2147483647"
        )
        #expect(
            token.link(to: try CDNURL(parsing: "https://e.example.test/s/link?a=1"))
                == "https://e.example.test/s/link?a=1&md5=\(Self.md5)&expires=2147483647"
        )
        // Read back from either carrier; other names are left alone; padding is read as nginx reads it.
        #expect(try SecureLinkToken(pairs: [CDNField("a", "1"), CDNField("expires", "2147483647"), CDNField("md5", Self.md5)]) == token)
        #expect(try SecureLinkToken(pairs: token.cookies(tokenName: "x") + [CDNField("tg_md5", "ignored")], tokenName: "x") == token)
        #expect(try SecureLinkToken(md5: Self.md5 + "==", expires: "2147483647") == token)
    }

    @Test(
        "the md5 and expires are refused unless nginx would read them as written",
        arguments: [
            ("", "1", "22 Base64url"), ("_e4Nc3iduzkWRm01TBBNY", "1", "22 Base64url"), ("_e4Nc3iduzkWRm01TBBNYwA", "1", "22 Base64url"),
            ("/e4Nc3iduzkWRm01TBBNYw", "1", "22 Base64url"), ("+e4Nc3iduzkWRm01TBBNYw", "1", "22 Base64url"),
            ("_e4Nc3iduzkWRm01TBBNYw=", "1", "22 Base64url"), ("_e4Nc3iduzkWRm01TBBN\nw", "1", "22 Base64url"),
            ("_e4Nc3iduzkWRm01TBBNYx", "1", "canonically"),
            (md5, "", "expires"), (md5, "0", "expires"), (md5, "0123", "expires"), (md5, "-5", "expires"), (md5, "+5", "expires"),
            (md5, "12a", "expires"), (md5, "99999999999999999999", "expires"), (md5, "9223372036854775808", "expires"),
        ] as [(String, String, String)]
    )
    func refused(_ md5: String, _ expires: String, _ named: String) {
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try SecureLinkToken(md5: md5, expires: expires) }
    }

    @Test(
        "pairs: a name twice, half a pair, none, or a token name nginx cannot read",
        arguments: [
            ([CDNField("md5", md5), CDNField("md5", md5), CDNField("expires", "1")], "tg", "md5 is given more than once"),
            ([CDNField("md5", md5), CDNField("expires", "1"), CDNField("expires", "2")], "tg", "expires is given more than once"),
            ([CDNField("md5", md5)], "tg", "expires is missing"),
            ([CDNField("tg_expires", "1")], "tg", "tg_md5 is missing"),
            ([CDNField("a", "b")], "tg", "no secure_link md5"),
            ([CDNField("md5", md5), CDNField("expires", "1")], "t-g", "token name 't-g'"),
            ([], "", "token name ''"),
        ] as [([CDNField], String, String)]
    )
    func pairsRefused(_ pairs: [CDNField], _ tokenName: String, _ named: String) {
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try SecureLinkToken(pairs: pairs, tokenName: tokenName) }
    }

    @Test("a cookie name nginx cannot read is refused")
    func cookieName() throws {
        let token = try SecureLinkToken(md5: Self.md5, expires: "1")
        RefusalExpectation.expect(.invalidTokenFormat, naming: "'a.b'") { _ = try token.cookies(tokenName: "a.b") }
        RefusalExpectation.expect(.invalidTokenFormat, naming: "1 to 64") { _ = try token.cookies(tokenName: String(repeating: "a", count: 65)) }
    }
}
