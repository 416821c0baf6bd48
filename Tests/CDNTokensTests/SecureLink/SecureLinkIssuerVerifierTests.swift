import Testing

@testable import CDNTokens

/// Issuing from the gate's parameters and verifying as the edge would.
@Suite struct SecureLinkIssuerVerifierTests {
    static let secret = Array("edge-secret".utf8)
    static let now: Int64 = 1_767_225_600
    static let folderExpression = try! SecureLinkExpression(parsing: "$secure_link_expires$folder$remote_addr $secret")
    static let urlExpression = try! SecureLinkExpression(parsing: "$secure_link_expires$uri $secret")

    static func parameters(
        _ url: String = "https://edge.example.test/hls/tnt/master.m3u8",
        scope: CDNScope = .folder,
        lifetime: Int64 = 600,
        ip: String? = "203.0.113.7"
    ) throws -> CDNIssueParameters {
        CDNIssueParameters(url: try CDNURL(parsing: url), scope: scope, now: now, lifetime: lifetime, clientIP: ip)
    }

    static func facts(_ path: String? = "/hls/tnt/seg/1.ts", now: Int64 = now + 10, ip: String? = "203.0.113.7") throws -> CDNRequestFacts {
        CDNRequestFacts(url: try path.map { try CDNURL(parsing: "https://edge.example.test" + $0) }, now: now, clientIP: ip)
    }

    @Test("a folder token verifies for every file under its folder, finding the folder or told it")
    func folderToken() throws {
        let token = try SecureLinkIssuer.issue(Self.parameters(), expression: Self.folderExpression, secret: Self.secret)
        #expect(token.expires == Self.now + 600)
        for path in ["/hls/tnt/master.m3u8", "/hls/tnt/seg/1.ts", "/hls/tnt/a/b/c/d.ts", "/hls/t%6et/x.ts"] {
            #expect(try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(path)).folder == "/hls/tnt/")
        }
        #expect(
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(nil), folder: "/hls/tnt/").folder
                == "/hls/tnt/"
        )
        RefusalExpectation.expect(.invalidSignature, naming: "folder(s)", "viewer's IP") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts("/hls/tnt2/a.ts"))
        }
        RefusalExpectation.expect(.urlNotCovered, naming: "/hls/tnt/", "https://edge.example.test/hls/cnn/a.ts") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts("/hls/cnn/a.ts"), folder: "/hls/tnt/")
        }
        RefusalExpectation.expect(.invalidSignature) {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(nil), folder: "/hls/")
        }
        RefusalExpectation.expect(.invalidTokenFormat, naming: "'hls/tnt'") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(nil), folder: "hls/tnt")
        }
        RefusalExpectation.expect(.urlNotCovered, naming: "$folder") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(nil))
        }
    }

    @Test("the IP: another one breaks the hash, an unknown one is IP_MISMATCH")
    func remoteAddress() throws {
        let token = try SecureLinkIssuer.issue(Self.parameters(), expression: Self.folderExpression, secret: Self.secret)
        RefusalExpectation.expect(.invalidSignature) {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(ip: "203.0.113.8"))
        }
        RefusalExpectation.expect(.ipMismatch, naming: "$remote_addr") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(ip: nil))
        }
    }

    @Test("a URL token verifies for its URL only, against nginx's decoded $uri")
    func urlToken() throws {
        let token = try SecureLinkIssuer.issue(
            Self.parameters("https://edge.example.test/vod/a.mp4", scope: .url, ip: nil),
            expression: Self.urlExpression,
            secret: Self.secret
        )
        try token.verify(expression: Self.urlExpression, secret: Self.secret, facts: Self.facts("/vod/a.mp4"))
        try token.verify(expression: Self.urlExpression, secret: Self.secret, facts: Self.facts("/vod/%61.mp4?x=1"))
        RefusalExpectation.expect(.invalidSignature, naming: "the path") {
            try token.verify(expression: Self.urlExpression, secret: Self.secret, facts: Self.facts("/vod/b.mp4"))
        }
        RefusalExpectation.expect(.urlNotCovered, naming: "$uri") {
            try token.verify(expression: Self.urlExpression, secret: Self.secret, facts: Self.facts(nil))
        }
    }

    @Test("expires has no leeway, as in nginx: valid through its second, expired after, whatever the leeway")
    func expiry() throws {
        let token = try SecureLinkIssuer.issue(Self.parameters(), expression: Self.folderExpression, secret: Self.secret)
        try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: Self.facts(now: Self.now + 600))
        var late = try Self.facts(now: Self.now + 601)
        late.leeway = 3600
        RefusalExpectation.expect(.tokenExpired, naming: "\(Self.now + 600)") {
            try token.verify(expression: Self.folderExpression, secret: Self.secret, facts: late)
        }
    }

    @Test(
        "the issuer refuses what the edge would hash differently, or a profile that does not fit",
        arguments: [
            // Dot segments never reach an issuer: a CDNURL cannot hold one (RequestPathTests).
            (
                "https://edge.example.test/hls/t%20t/a.m3u8", CDNScope.folder, "$secure_link_expires$folder$remote_addr $secret", "203.0.113.7",
                Int64(600), "percent escape"
            ),
            ("https://edge.example.test/hls//tnt/a.m3u8", .folder, "$secure_link_expires$folder$remote_addr $secret", "203.0.113.7", 600, "'//'"),
            ("https://edge.example.test/hls/tnt/a.m3u8", .folder, "$secure_link_expires$uri $secret", nil, 600, "sign $folder instead"),
            ("https://edge.example.test/hls/tnt/a.m3u8", .folder, "$secure_link_expires$folder $secret", "203.0.113.7", 600, "$remote_addr"),
            ("https://edge.example.test/hls/tnt/a.m3u8", .folder, "$secure_link_expires$folder$remote_addr $secret", "localhost", 600, "not an IPv4"),
            ("https://edge.example.test/hls/tnt/a.m3u8", .folder, "$secure_link_expires$folder $secret", nil, 0, "lifetime"),
            ("https://edge.example.test/hls/tnt/a.m3u8", .folder, "$secure_link_expires$folder $secret", nil, Int64.max, "outside 1970"),
        ] as [(String, CDNScope, String, String?, Int64, String)]
    )
    func issueRefused(_ url: String, _ scope: CDNScope, _ expression: String, _ ip: String?, _ lifetime: Int64, _ named: String) throws {
        let parameters = try Self.parameters(url, scope: scope, lifetime: lifetime, ip: ip)
        let expression = try SecureLinkExpression(parsing: expression)
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) {
            _ = try SecureLinkIssuer.issue(parameters, expression: expression, secret: Self.secret)
        }
    }

    @Test("an empty secret is refused")
    func emptySecret() throws {
        let parameters = try Self.parameters(ip: nil)
        let expression = try SecureLinkExpression(parsing: "$secure_link_expires$folder $secret")
        RefusalExpectation.expect(.invalidTokenFormat, naming: "empty") {
            _ = try SecureLinkIssuer.issue(parameters, expression: expression, secret: [])
        }
    }

    @Test("at most 32 ancestor folders are tried")
    func boundedFolders() throws {
        let deep = "/" + String(repeating: "d/", count: 200) + "x.ts"
        let expression = try SecureLinkExpression(parsing: "$secure_link_expires$folder $secret")
        let folders = try SecureLinkToken.folderCandidates(expression: expression, given: nil, path: Array(deep.utf8), url: nil)
        #expect(folders.count == SecureLinkToken.maximumFoldersTried)
        #expect(folders.first == Array(("/" + String(repeating: "d/", count: 200)).utf8))
    }
}
