import CDNTokens
import EntitlementTokens
import Foundation
import Testing

/// The verifier's verdicts and the issuer's refusals: each status for its cause,
/// tampering of every part, and the issuer's round trip through the verifier.
@Suite("CloudFront verification")
struct CloudFrontVerificationTests {
    static let now: Int64 = 1_767_222_000
    static let folderURL = "https://d111111abcdef8.cloudfront.net/hls/tnt/master.m3u8"
    static let keys = [CloudFrontFixtures.keyPairID: CloudFrontFixtures.rsaKey.publicKey]

    static func issue(_ url: String = folderURL, scope: CDNScope = .folder, clientIP: String? = nil) throws -> IssuedCloudFrontToken {
        try CloudFrontFixtures.issuer.issue(
            CDNIssueParameters(
                url: try CDNURL(parsing: url),
                scope: scope,
                now: now,
                lifetime: 600,
                clientIP: clientIP
            )
        )
    }

    static func facts(_ url: String? = folderURL, now: Int64 = now + 1, clientIP: String? = nil) throws -> CDNRequestFacts {
        CDNRequestFacts(url: try url.map { u throws(CDNRefusal) in try CDNURL(parsing: u) }, now: now, clientIP: clientIP)
    }

    /// The refusal's status and reason, or nil when it verified.
    static func refusal(_ token: CloudFrontToken, keys: [String: PublicKey] = keys, _ facts: CDNRequestFacts) -> CDNRefusal? {
        do {
            _ = try token.verify(keys: keys, facts: facts)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "what the issuer makes verifies, on both carriers, for every scope and binding",
        arguments: [
            (folderURL, CDNScope.folder, nil as String?), (folderURL, .url, nil), (folderURL, .folder, "203.0.113.9"),
            ("https://h.example/v/m.mp4?q=1", .url, "2001:db8::1"), ("http://h.example:8080/", .folder, nil),
        ]
    )
    func issuedVerifies(_ url: String, _ scope: CDNScope, _ ip: String?) throws {
        let issued = try Self.issue(url, scope: scope, clientIP: ip)
        let signed = try CloudFrontSignedURL(try CDNURL(parsing: issued.signedURL))
        #expect(signed.token == issued.token)
        #expect(signed.unsignedURL.description == url)
        let verified = try signed.token.verify(keys: Self.keys, facts: try Self.facts(issued.signedURL, clientIP: ip))
        #expect(verified.signedPolicy == issued.signedPolicy)
        #expect(verified.policy == issued.policy)
        #expect(verified.hashAlgorithm == .sha1)
        let cookies = try CloudFrontToken(cookiePairs: issued.cookies)
        _ = try cookies.verify(keys: Self.keys, facts: try Self.facts(url, clientIP: ip))
    }

    @Test("a folder scope covers its folder, and not a sibling that shares its prefix")
    func folderScope() throws {
        let token = try Self.issue().token.carried(by: .cookie)
        for url in ["https://d111111abcdef8.cloudfront.net/hls/tnt/seg-1.ts", "https://d111111abcdef8.cloudfront.net/hls/tnt/a/b.ts?x=1"] {
            #expect(Self.refusal(token, try Self.facts(url)) == nil)
        }
        for url in [
            "https://d111111abcdef8.cloudfront.net/hls/tnt2/seg-1.ts", "http://d111111abcdef8.cloudfront.net/hls/tnt/seg-1.ts",
            "https://other.cloudfront.net/hls/tnt/seg-1.ts", "https://d111111abcdef8.cloudfront.net:444/hls/tnt/seg-1.ts",
        ] {
            let refusal = Self.refusal(token, try Self.facts(url))
            #expect(refusal?.status == .urlNotCovered)
            #expect(refusal?.reason.contains("https://d111111abcdef8.cloudfront.net/hls/tnt/*") == true)
            #expect(refusal?.reason.contains(url) == true)
        }
        // Without a URL a custom policy's Resource is not judged.
        #expect(Self.refusal(token, try Self.facts(nil)) == nil)
    }

    @Test("times are exact: DateLessThan exclusive, DateGreaterThan inclusive, no leeway")
    func times() throws {
        let token = try Self.issue().token
        let expires = Self.now + 600
        #expect(Self.refusal(token, try Self.facts(now: expires - 1)) == nil)
        let expired = Self.refusal(token, try Self.facts(now: expires))
        #expect(expired?.status == .tokenExpired)
        #expect(expired?.reason.contains("\(expires)") == true)
        var generous = try Self.facts(now: expires + 5)
        generous.leeway = 3600
        #expect(Self.refusal(token, generous)?.status == .tokenExpired)

        let policy = CloudFrontPolicy(resource: "https://d111111abcdef8.cloudfront.net/*", dateLessThan: expires, dateGreaterThan: Self.now + 100)
        let early = try Self.signed(policy)
        #expect(Self.refusal(early, try Self.facts(now: Self.now + 100)) == nil)
        let notYet = Self.refusal(early, try Self.facts(now: Self.now + 99))
        #expect(notYet?.status == .tokenNotYetValid)
        #expect(notYet?.reason.contains("\(Self.now + 100)") == true)
    }

    @Test("an IP binding admits its range only, and refuses an unknown viewer")
    func ipBinding() throws {
        let v4 = try Self.issue(clientIP: "203.0.113.9").token
        #expect(Self.refusal(v4, try Self.facts(clientIP: "203.0.113.9")) == nil)
        #expect(Self.refusal(v4, try Self.facts(clientIP: "::ffff:203.0.113.9")) == nil)
        for other in ["203.0.113.10", "2001:db8::1", "not an ip"] {
            let refusal = Self.refusal(v4, try Self.facts(clientIP: other))
            #expect(refusal?.status == .ipMismatch)
            #expect(refusal?.reason.contains("203.0.113.9/32") == true)
        }
        #expect(Self.refusal(v4, try Self.facts(clientIP: nil))?.reason.contains("unknown") == true)
        let v6 = try Self.issue(clientIP: "2001:DB8:0::0:1").token
        guard case .custom(let policy, _) = v6.policy else {
            Issue.record("not custom")
            return
        }
        #expect(policy.ipAddress?.text == "2001:db8::1/128")
        #expect(Self.refusal(v6, try Self.facts(clientIP: "2001:db8::1")) == nil)
        #expect(Self.refusal(v6, try Self.facts(clientIP: "2001:db8::2"))?.status == .ipMismatch)
    }

    @Test("tampering with any part is INVALID_SIGNATURE")
    func tampering() throws {
        let issued = try Self.issue()
        guard case .custom(_, let bytes) = issued.token.policy else {
            Issue.record("not custom")
            return
        }
        // A policy byte changed (the resource widened from /hls/tnt/* to /hls/tnu/*).
        var widened = bytes
        let index = try #require(widened.firstIndex(of: UInt8(ascii: "*"))) - 2
        widened[index] &+= 1
        let changedPolicy = CloudFrontToken(
            carrier: .query,
            policy: .custom(try CloudFrontPolicy(json: widened), bytes: widened),
            signature: issued.token.signature,
            keyPairID: CloudFrontFixtures.keyPairID
        )
        #expect(Self.refusal(changedPolicy, try Self.facts("https://d111111abcdef8.cloudfront.net/hls/tnu/x.ts"))?.status == .invalidSignature)
        // A signature bit flipped.
        var signature = issued.token.signature
        signature[100] ^= 0x01
        let changedSignature = CloudFrontToken(
            carrier: .query,
            policy: issued.token.policy,
            signature: signature,
            keyPairID: CloudFrontFixtures.keyPairID
        )
        #expect(Self.refusal(changedSignature, try Self.facts())?.status == .invalidSignature)
        // The key id changed to another configured RSA key's.
        let second = CloudFrontFixtures.directory.appendingPathComponent("test-only-cloudfront-second-rsa2048.pem").path
        let withOther = Self.keys.merging(["APKASECOND": try SigningKey(path: second).publicKey]) { a, _ in a }
        let changedID = CloudFrontToken(carrier: .query, policy: issued.token.policy, signature: issued.token.signature, keyPairID: "APKASECOND")
        let refusal = Self.refusal(changedID, keys: withOther, try Self.facts())
        #expect(refusal?.status == .invalidSignature)
        #expect(refusal?.reason.contains("APKASECOND") == true)
        // The hash algorithm claimed differently.
        let sha256 = CloudFrontToken(
            carrier: .query,
            policy: issued.token.policy,
            signature: issued.token.signature,
            keyPairID: CloudFrontFixtures.keyPairID,
            hashAlgorithm: .sha256
        )
        #expect(Self.refusal(sha256, try Self.facts())?.reason.contains("SHA256") == true)
    }

    @Test("a canned policy is rebuilt from Expires and the URL asked for")
    func cannedRebuilt() throws {
        let issued = try Self.issue(scope: .url)
        guard case .canned(let expires) = issued.token.policy else {
            Issue.record("not canned")
            return
        }
        // The signed URL itself (its signing parameters are removed before the check).
        #expect(Self.refusal(issued.token, try Self.facts(issued.signedURL)) == nil)
        // Another URL: the rebuilt policy differs, so the signature fails, naming it.
        let other = Self.refusal(issued.token, try Self.facts("https://d111111abcdef8.cloudfront.net/hls/tnt/other.m3u8"))
        #expect(other?.status == .invalidSignature)
        #expect(other?.reason.contains("other.m3u8") == true)
        // Expires moved by a second.
        let later = CloudFrontToken(
            carrier: .query,
            policy: .canned(expires: expires + 1),
            signature: issued.token.signature,
            keyPairID: CloudFrontFixtures.keyPairID
        )
        #expect(Self.refusal(later, try Self.facts())?.status == .invalidSignature)
        // No URL: the signature cannot be checked.
        #expect(Self.refusal(issued.token, try Self.facts(nil))?.reason.contains("no URL was given") == true)
    }

    @Test(
        "the signing parameters are removed wherever they stand, the URL's own kept in order",
        arguments: [
            ("https://h/p?Expires=1&Signature=s&Key-Pair-Id=k", "https://h/p"),
            ("https://h/p?&Expires=1&Signature=s&Key-Pair-Id=k", "https://h/p?"),
            ("https://h/p?a=1&Policy=x&b=2&Signature=s&Key-Pair-Id=k&Hash-Algorithm=SHA256&c", "https://h/p?a=1&b=2&c"),
            ("https://h/p?a=1&expires=2", "https://h/p?a=1&expires=2"),
            ("https://h/p", "https://h/p"),
        ]
    )
    func signingParametersRemoved(_ signed: String, _ unsigned: String) throws {
        #expect(try CloudFrontSignedURL.removingSigningParameters(from: try CDNURL(parsing: signed)).description == unsigned)
    }

    @Test("key selection: an unknown id, a key type CloudFront does not use, ECDSA with SHA1")
    func keySelection() throws {
        let token = try Self.issue().token
        let unknown = Self.refusal(token, keys: ["APKAOTHER": CloudFrontFixtures.rsaKey.publicKey], try Self.facts())
        #expect(unknown?.status == .invalidSignature)
        #expect(unknown?.reason.contains("'\(CloudFrontFixtures.keyPairID)'") == true)
        let ed25519 = try PublicKey.keys(from: Array(Self.ed25519PublicKey.utf8), source: "ed25519")[0]
        #expect(Self.refusal(token, keys: [CloudFrontFixtures.keyPairID: ed25519], try Self.facts())?.reason.contains("ECDSA P-256") == true)
        let ecdsa = CloudFrontToken(
            carrier: .query,
            policy: token.policy,
            signature: token.signature,
            keyPairID: CloudFrontFixtures.keyPairID,
            hashAlgorithm: .sha1
        )
        let refusal = Self.refusal(ecdsa, keys: [CloudFrontFixtures.keyPairID: CloudFrontFixtures.p256Key.publicKey], try Self.facts())
        #expect(refusal?.status == .invalidSignature)
        #expect(refusal?.reason.contains("names SHA1") == true)
    }

    @Test(
        "the issuer refuses what it would have to change",
        arguments: [
            ("https://h.example/a\"b/c.ts", "would escape"),
            ("https://h.example/a*/c.ts", "wildcard"),
            ("https://h.example/c.ts?Expires=1", "already has a 'Expires'"),
            ("https://h.example/c.ts?a=1&Key-Pair-Id=K", "already has a 'Key-Pair-Id'"),
        ]
    )
    func issueRefusesURLs(_ url: String, _ reason: String) throws {
        let parameters = CDNIssueParameters(url: try CDNURL(parsing: url), scope: .url, now: Self.now, lifetime: 60)
        #expect(Self.issueRefusal(parameters)?.contains(reason) == true)
    }

    @Test("the issuer refuses bad times, IPs and keys")
    func issueRefusesSettings() throws {
        let url = try CDNURL(parsing: Self.folderURL)
        #expect(Self.issueRefusal(CDNIssueParameters(url: url, scope: .url, now: Self.now, lifetime: 0))?.contains("lifetime") == true)
        #expect(Self.issueRefusal(CDNIssueParameters(url: url, scope: .url, now: -1, lifetime: 60))?.contains("lifetime") == true)
        #expect(Self.issueRefusal(CDNIssueParameters(url: url, scope: .url, now: CloudFrontPolicy.latestTime, lifetime: 60)) != nil)
        #expect(
            Self.issueRefusal(CDNIssueParameters(url: url, scope: .url, now: Self.now, lifetime: 60, clientIP: "203.0.113.07"))?
                .contains("client IP") == true
        )
        #expect(throws: CDNRefusal.self) { _ = try CloudFrontIssuer(key: CloudFrontFixtures.p256Key, keyPairID: "K") }
        #expect(throws: CDNRefusal.self) { _ = try CloudFrontIssuer(key: CloudFrontFixtures.rsaKey, keyPairID: "K&x=1") }
    }

    static func issueRefusal(_ parameters: CDNIssueParameters) -> String? {
        do {
            _ = try CloudFrontFixtures.issuer.issue(parameters)
            return nil
        } catch {
            #expect(error.status == .invalidTokenFormat)
            return error.reason
        }
    }

    /// A token over `policy`, signed by the fixture key as a custom policy.
    static func signed(_ policy: CloudFrontPolicy) throws -> CloudFrontToken {
        let bytes = policy.json
        let signature = try CloudFrontFixtures.rsaKey.pkcs1Signature(for: bytes, digest: .sha1)
        return CloudFrontToken(
            carrier: .cookie,
            policy: .custom(policy, bytes: bytes),
            signature: signature,
            keyPairID: CloudFrontFixtures.keyPairID
        )
    }

    static let ed25519PublicKey = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEAEFdNGKTVXNjis5C4fRFu6aAorZb88BMxHKdbTg7I7c4=
        -----END PUBLIC KEY-----
        """
}
