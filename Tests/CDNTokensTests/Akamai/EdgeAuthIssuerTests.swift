import Testing

@testable import CDNTokens

/// The one form tokengate issues: `[ip=…~]st=<now − leeway>~exp=<now + lifetime>~acl=<scope>~hmac=…`.
@Suite struct EdgeAuthIssuerTests {
    static let key = try! EdgeAuthKey(hex: "52a152a152a152a152a152a152a152a1")

    static func parameters(
        _ url: String = "https://cdn.example.test/hls/tnt/master.m3u8",
        scope: CDNScope = .folder,
        lifetime: Int64 = 3600,
        leeway: Int64 = 30,
        ip: String? = nil
    ) throws -> CDNIssueParameters {
        CDNIssueParameters(url: try CDNURL(parsing: url), scope: scope, now: 1_767_225_600, lifetime: lifetime, leeway: leeway, clientIP: ip)
    }

    @Test("a folder scope is written /folder/*, a URL scope as the path; st is set back by the leeway")
    func form() throws {
        let folder = try EdgeAuthIssuer.issue(Self.parameters(ip: "203.0.113.7"), key: Self.key)
        #expect(folder.fields.map(\.name) == ["ip", "st", "exp", "acl", "hmac"])
        #expect(folder.text.hasPrefix("ip=203.0.113.7~st=1767225570~exp=1767229200~acl=/hls/tnt/*~hmac="))
        // The same bytes as the tool's vector for these inputs (acl-gate-form-ip).
        let vector = try #require(EdgeAuthVector.all.first { $0.name == "acl-gate-form-ip" })
        #expect(folder.text == vector.token)
        let url = try EdgeAuthIssuer.issue(Self.parameters(scope: .url), key: Self.key)
        #expect(url.text.hasPrefix("st=1767225570~exp=1767229200~acl=/hls/tnt/master.m3u8~hmac="))
        #expect(url.hmac.count == 32)
    }

    @Test("what is issued verifies for its scope, and only its scope")
    func verifies() throws {
        let parameters = try Self.parameters(ip: "2001:db8::7")
        let token = try EdgeAuthIssuer.issue(parameters, key: Self.key)
        let inside = CDNRequestFacts(
            url: try CDNURL(parsing: "https://cdn.example.test/hls/tnt/seg/9.ts"),
            now: parameters.now,
            clientIP: "2001:db8::7"
        )
        try token.verify(key: Self.key, facts: inside)
        var outside = inside
        outside.url = try CDNURL(parsing: "https://cdn.example.test/hls/tnt2/a.ts")
        RefusalExpectation.expect(.urlNotCovered, naming: "/hls/tnt/*", "/hls/tnt2/a.ts") { try token.verify(key: Self.key, facts: outside) }
    }

    @Test(
        "a path the ACL would have to escape is refused, not mangled",
        arguments: [
            "https://cdn.example.test/a*b/x.ts", "https://cdn.example.test/a!b/x.ts", "https://cdn.example.test/a~b/x.ts",
            "https://cdn.example.test/a;b/x.ts", "https://cdn.example.test/a,b/x.ts", "https://cdn.example.test/a\"b/x.ts",
            "https://cdn.example.test/a&b/x.ts",
        ]
    )
    func unwritablePath(_ url: String) throws {
        let parameters = try Self.parameters(url)
        RefusalExpectation.expect(.invalidTokenFormat, naming: "which an EdgeAuth ACL would have to escape") {
            _ = try EdgeAuthIssuer.issue(parameters, key: Self.key)
        }
    }

    @Test(
        "an IP that is not an address, or impossible times, are refused",
        arguments: [
            ("1.2.3.4 ", Int64(3600), Int64(30), "is not an IPv4 or IPv6 address"), ("fe80::1%eth0", 3600, 30, "is not an IPv4"),
            ("localhost", 3600, 30, "is not an IPv4"), ("", 3600, 30, "is not an IPv4"), ("1.2.3.4", 0, 30, "lifetime"),
            ("1.2.3.4", 3600, -1, "negative leeway"), ("1.2.3.4", 3600, 1_767_225_600, "outside 1970"),
            ("1.2.3.4", Int64.max, 30, "outside 1970"),
        ] as [(String, Int64, Int64, String)]
    )
    func refused(_ ip: String, _ lifetime: Int64, _ leeway: Int64, _ named: String) throws {
        let parameters = try Self.parameters(lifetime: lifetime, leeway: leeway, ip: ip)
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try EdgeAuthIssuer.issue(parameters, key: Self.key) }
    }

    @Test("the carrier names an edge reads")
    func carrierNames() {
        #expect(EdgeAuthToken.carrierNames == ["__token__", "hdnts", "hdnea", "hdntl"])
    }
}
