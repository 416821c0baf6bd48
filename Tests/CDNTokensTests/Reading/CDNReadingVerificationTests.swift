import EntitlementTokens
import Foundation
import Testing

@testable import CDNTokens

/// A pasted token verified with a key file read as its kind needs it, or
/// with a profile: VALID_TOKEN and every refusal, each naming what failed
/// (docs/DESIGN.md#reading-cdn-tokens-back).
@Suite struct CDNReadingVerificationTests {
    typealias F = ReadingFixtures

    static func expect(
        _ text: String,
        _ kind: CDNTokenKind,
        _ facts: CDNRequestFacts,
        keys: CDNVerificationKeys? = nil,
        _ status: CDNStatus,
        naming words: String...,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let reading = try CDNReading(text: text)
        #expect(reading.kind == kind, sourceLocation: sourceLocation)
        let (got, reason) = F.verdict(reading, try keys ?? F.keys(kind), facts)
        #expect(got == status, "\(reason)", sourceLocation: sourceLocation)
        for word in words { #expect(reason.contains(word), "'\(reason)' does not name '\(word)'", sourceLocation: sourceLocation) }
    }

    /// `text` with the character at `offset` from its end changed.
    static func tampered(_ text: String, at offset: Int) -> String {
        var characters = Array(text)
        let index = characters.count - offset
        characters[index] = characters[index] == "a" ? "b" : "a"
        return String(characters)
    }

    @Test("akamai: valid, expired, not yet valid, tampered, another key, not covered, IP")
    func akamai() throws {
        let token = try F.akamai()
        try Self.expect(token, .akamai, F.facts(), .validToken)
        try Self.expect("\(F.segment)?hdnts=\(token)", .akamai, F.facts(nil), .validToken)
        try Self.expect(token, .akamai, F.facts(now: F.now + 10_000), .tokenExpired, naming: "exp")
        try Self.expect(token, .akamai, F.facts(now: F.now - 1_000), .tokenNotYetValid, naming: "st")
        try Self.expect(Self.tampered(token, at: 1), .akamai, F.facts(), .invalidSignature, naming: "hmac does not match")
        let other = try CDNVerificationKeys(kind: .akamai, keyFile: Array("00112233445566778899aabbccddeeff".utf8), source: "other.key")
        try Self.expect(token, .akamai, F.facts(), keys: other, .invalidSignature)
        try Self.expect(token, .akamai, F.facts(F.elsewhere), .urlNotCovered, naming: "/hls/tnt/*", F.elsewhere)
        let bound = try F.akamai(F.parameters(ip: F.clientIP))
        try Self.expect(bound, .akamai, F.facts(ip: F.clientIP), .validToken)
        try Self.expect(bound, .akamai, F.facts(ip: "198.51.100.1"), .ipMismatch, naming: F.clientIP, "198.51.100.1")
    }

    @Test("cloudfront: canned and custom, valid, expired, tampered, unknown key id, not covered, IP")
    func cloudFront() throws {
        let canned = try F.cloudFront(F.parameters(scope: .url)).signedURL
        try Self.expect(canned, .cloudfront, F.facts(nil), .validToken)
        try Self.expect(canned, .cloudfront, F.facts(nil), keys: F.keys(.cloudfront, keyID: "K2JCJMDEHXQW5F"), .validToken)
        try Self.expect(canned, .cloudfront, F.facts(nil), keys: F.keys(.cloudfront, keyID: "KOTHER"), .invalidSignature, naming: "K2JCJMDEHXQW5F")
        try Self.expect(canned, .cloudfront, F.facts(nil, now: F.now + 600), .tokenExpired, naming: "DateLessThan")
        let custom = try F.cloudFront(F.parameters(ip: F.clientIP))
        let cookies = "Cookie: " + custom.cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
        try Self.expect(cookies, .cloudfront, F.facts(ip: F.clientIP), .validToken)
        try Self.expect(
            cookies,
            .cloudfront,
            F.facts(F.elsewhere, ip: F.clientIP),
            .urlNotCovered,
            naming: "https://edge.example.test/hls/tnt/*",
            F.elsewhere
        )
        try Self.expect(cookies, .cloudfront, F.facts(ip: "198.51.100.1"), .ipMismatch, naming: "198.51.100.1")
        let signature = custom.cookies[1].value
        let forged = cookies.replacingOccurrences(of: signature, with: Self.tampered(signature, at: 5))
        try Self.expect(forged, .cloudfront, F.facts(ip: F.clientIP), .invalidSignature, naming: "does not verify")
    }

    @Test("cat: valid by MAC and by ES256, expired, not yet valid, tampered, not covered, IP, an unsupported claim")
    func cat() throws {
        let token = try F.cat()
        try Self.expect("CTA-Common-Access-Token: \(token)", .cat, F.facts(), .validToken)
        try Self.expect(token, .cat, F.facts(), keys: F.keys(.cat, keyID: "edge-1"), .validToken)
        try Self.expect(token, .cat, F.facts(now: F.now + 10_000), .tokenExpired, naming: "exp")
        try Self.expect(token, .cat, F.facts(now: F.now - 1_000), .tokenNotYetValid, naming: "nbf")
        try Self.expect(Self.tampered(token, at: 3), .cat, F.facts(), .invalidSignature)
        try Self.expect(token, .cat, F.facts(F.elsewhere), .urlNotCovered, naming: "/hls/tnt/", "/hls/cnn/master.m3u8")
        let bound = try F.cat(F.parameters(ip: F.clientIP))
        try Self.expect(bound, .cat, F.facts(ip: "198.51.100.1"), .ipMismatch)
        let geo = try F.cat(extraClaims: [CBORMapEntry(.integer(CATClaim.catgeoiso3166.rawValue), .array([.text("US")]))])
        try Self.expect(geo, .cat, F.facts(), .unsupportedClaim, naming: "catgeoiso3166")
        let es256 = try F.cat(key: CATFixtures.es256Key(id: "edge-es"))
        let publicKey = try CDNVerificationKeys(
            kind: .cat,
            keyFile: [UInt8](CATFixtures.data("es256-public.pem")),
            source: "es256-public.pem",
            keyID: "edge-es"
        )
        try Self.expect(es256, .cat, F.facts(), keys: publicKey, .validToken)
        let otherPublic = try CDNVerificationKeys(kind: .cat, keyFile: [UInt8](CATFixtures.data("es256-other-private.pem")), source: "other.pem")
        try Self.expect(es256, .cat, F.facts(), keys: otherPublic, .invalidSignature)
    }

    @Test("nginx-secure-link: valid, expired, another secret, another folder")
    func secureLink() throws {
        let token = try F.secureLink()
        let link = try token.link(to: CDNURL(parsing: F.segment))
        try Self.expect(link, .nginxSecureLink, F.facts(nil), .validToken)
        let cookies = "Cookie: tg_md5=\(token.md5Text); tg_expires=\(token.expires)"
        try Self.expect(cookies, .nginxSecureLink, F.facts(), .validToken)
        try Self.expect(cookies, .nginxSecureLink, F.facts(now: F.now + 10_000), .tokenExpired, naming: "expired")
        let otherSecret = try CDNVerificationKeys(
            kind: .nginxSecureLink,
            keyFile: Array("another-secret".utf8),
            source: "other",
            secureLinkExpression: F.folderExpression
        )
        try Self.expect(cookies, .nginxSecureLink, F.facts(), keys: otherSecret, .invalidSignature, naming: F.folderExpression)
        try Self.expect(cookies, .nginxSecureLink, F.facts(F.elsewhere), .invalidSignature)
        try Self.expect(cookies, .nginxSecureLink, F.facts(nil), .urlNotCovered, naming: "$folder")
    }

    @Test("keys of another kind, and key files a kind cannot use")
    func keyKinds() throws {
        try Self.expect(try F.akamai(), .akamai, F.facts(), keys: F.keys(.cat), .invalidTokenFormat, naming: "akamai token", "cat tokens")
        func refused(_ body: () throws(CDNRefusal) -> CDNVerificationKeys) -> String? {
            do {
                _ = try body()
                return nil
            } catch { return error.reason }
        }
        #expect(
            refused { () throws(CDNRefusal) in try CDNVerificationKeys(kind: .akamai, keyFile: try! F.cloudFrontKeyFile, source: "k.pem") }?
                .contains("k.pem: ") == true
        )
        #expect(
            refused { () throws(CDNRefusal) in try CDNVerificationKeys(kind: .cloudfront, keyFile: Array(F.akamaiHex.utf8), source: "k.hex") }?
                .contains("k.hex") == true
        )
        #expect(
            refused { () throws(CDNRefusal) in try CDNVerificationKeys(kind: .nginxSecureLink, keyFile: F.secret, source: "s") }?
                .contains("secure_link_md5 expression") == true
        )
        #expect(
            refused { () throws(CDNRefusal) in
                try CDNVerificationKeys(kind: .nginxSecureLink, keyFile: F.secret, source: "s", secureLinkExpression: "$uri $secret")
            }?.contains("$secure_link_expires") == true
        )
    }

    @Test("a profile gives the kind, every key, the token name and the expression")
    func profile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cdn-reading-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        _ = try write("old.key", "00112233445566778899aabbccddeeff\n")
        _ = try write("akamai.key", F.akamaiHex + "\n")
        _ = try write("secret", String(decoding: F.secret, as: UTF8.self) + "\n")
        let akamai = try write(
            "akamai.profile",
            """
            name = akamai-edge
            kind = akamai
            key = old.key
            key = akamai.key
            token-name = edge_token
            resource = TNT \(F.url)
            """
        )
        let secureLink = try write(
            "nginx.profile",
            """
            name = nginx-edge
            kind = nginx-secure-link
            key = secret
            token-name = media
            resource = TNT \(F.url)
            secure-link-md5 = \(F.folderExpression)
            """
        )
        let set = try CDNProfileSet.load(
            paths: [akamai, secureLink],
            defaults: CDNProfileDefaults(lifetime: 600, leeway: 30),
            credentialsDirectory: directory.path
        )
        let akamaiProfile = set.profiles[0]
        let nginx = set.profiles[1]
        // The second key verifies (rotation); the token travels under the profile's name only.
        let token = try F.akamai()
        let reading = try akamaiProfile.read("Cookie: __token__=x; edge_token=\(token)")
        #expect(reading.tokenName == "edge_token")
        try akamaiProfile.verify(reading: reading, facts: F.facts())
        #expect(
            F.verdict(try akamaiProfile.read("edge_token=\(Self.tampered(token, at: 1))"), akamaiProfile.verificationKeys, try F.facts()).0
                == .invalidSignature
        )
        let link = try F.secureLink()
        let cookies = "Cookie: media_md5=\(link.md5Text); media_expires=\(link.expires)"
        try nginx.verify(reading: nginx.read(cookies), facts: F.facts())
        do {
            _ = try nginx.read("Cookie: tg_md5=\(link.md5Text); tg_expires=\(link.expires)")
            Issue.record("a cookie name the profile does not use was read")
        } catch {
            #expect(error.status == .invalidTokenFormat && error.reason.contains("media_md5"), "\(error)")
        }
        let cat = try F.cat()
        do {
            _ = try nginx.read("CTA-Common-Access-Token: \(cat)")
            Issue.record("another kind's token was read under an nginx profile")
        } catch {
            #expect(error.reason.contains("no nginx-secure-link token"), "\(error)")
        }
    }
}
