import CDNTokens
import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

/// Live cross-checks with botocore's `CloudFrontSigner` (PyPI), both ways: what we
/// issue, botocore reproduces byte for byte and `cryptography` verifies; what
/// botocore signs now, with inputs it was never fixed on, we verify.
@Suite("CloudFront against botocore, live")
struct CloudFrontPeerTests {
    static let signer = """
        import base64, json, sys
        from datetime import datetime, timezone
        from botocore.signers import CloudFrontSigner
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), password=None)
        cf = CloudFrontSigner(sys.argv[2], lambda m: key.sign(m, padding.PKCS1v15(), hashes.SHA1()))
        when = lambda s: datetime.fromtimestamp(s, tz=timezone.utc)
        """

    /// Ours → botocore: each case is issued here, then botocore builds the same
    /// policy and URL from the same inputs; `cryptography` verifies our signature.
    @Test(.enabled(if: IndependentPython.available(["botocore", "cryptography"]), "pip install botocore cryptography"))
    func botocoreReproducesWhatWeIssue() throws {
        let cases: [(url: String, scope: CDNScope, ip: String?)] = [
            ("https://d111111abcdef8.cloudfront.net/a/b/c.m3u8", .url, nil),
            ("https://d111111abcdef8.cloudfront.net/a/b/c.m3u8?x=1", .url, nil),
            ("http://cdn.example.net/a/b/", .folder, nil),
            ("https://cdn.example.net:444/live/x/seg.ts?y=%2F", .folder, "192.0.2.44"),
            ("https://cdn.example.net/vod/m.mp4?", .url, "198.51.100.1"),
            ("https://cdn.example.net/", .folder, "2001:db8:0:0:1::9"),
        ]
        var inputs: [[String: Any]] = []
        var ours: [String] = []
        for (index, item) in cases.enumerated() {
            let parameters = CDNIssueParameters(
                url: try CDNURL(parsing: item.url),
                scope: item.scope,
                now: 1_800_000_000 + Int64(index) * 7,
                lifetime: 600 + Int64(index),
                clientIP: item.ip
            )
            let issued = try CloudFrontFixtures.issuer.issue(parameters)
            ours.append(issued.signedURL)
            let ip = issued.policy.ipAddress?.text
            inputs.append([
                "url": item.url, "resource": issued.policy.resource, "expires": parameters.expires,
                "canned": issued.token.policy == .canned(expires: parameters.expires), "ip": ip ?? NSNull(),
                "ours": issued.signedURL,
            ])
        }
        let script =
            Self.signer + "\n" + """
                public = key.public_key()
                for case in json.load(sys.stdin):
                    if case['canned']:
                        url = cf.generate_presigned_url(case['url'], date_less_than=when(case['expires']))
                        policy = cf.build_policy(case['url'], when(case['expires']))
                    else:
                        policy = cf.build_policy(case['resource'], when(case['expires']), ip_address=case['ip'])
                        url = cf.generate_presigned_url(case['url'], policy=policy)
                    sig = case['ours'].split('Signature=')[1].split('&')[0]
                    raw = base64.b64decode(sig.replace('-', '+').replace('_', '=').replace('~', '/'))
                    public.verify(raw, policy.encode(), padding.PKCS1v15(), hashes.SHA1())
                    print(url)
                """
        let data = try JSONSerialization.data(withJSONObject: inputs)
        let output = try IndependentPython.run(
            script,
            arguments: [CloudFrontFixtures.rsaKeyPath, CloudFrontFixtures.keyPairID],
            input: String(decoding: data, as: UTF8.self)
        )
        let theirs = output.split(separator: "\n").map(String.init)
        #expect(theirs == ours)
    }

    /// botocore → ours: canned and custom URLs botocore signs now (with conditions
    /// it writes and the issuer never does: subnets, DateGreaterThan) verify here,
    /// and are refused where CloudFront would refuse them.
    @Test(.enabled(if: IndependentPython.available(["botocore", "cryptography"]), "pip install botocore cryptography"))
    func weVerifyWhatBotocoreSigns() throws {
        let script =
            Self.signer + "\n" + """
                base = 'https://d111111abcdef8.cloudfront.net'
                print(cf.generate_presigned_url(base + '/p/q/r.ts?a=b', date_less_than=when(1800000100)))
                print(cf.generate_presigned_url(base + '/p/q/r.ts', policy=cf.build_policy(base + '/p/*', when(1800000100),
                      date_greater_than=when(1800000000), ip_address='10.1.0.0/16')))
                print(cf.generate_presigned_url(base + '/p/q/r.ts', policy=cf.build_policy(base + '/p/?/r.*', when(1800000100))))
                """
        let urls = try IndependentPython.run(script, arguments: [CloudFrontFixtures.rsaKeyPath, CloudFrontFixtures.keyPairID])
            .split(separator: "\n").map(String.init)
        try #require(urls.count == 3)
        let keys = [CloudFrontFixtures.keyPairID: CloudFrontFixtures.rsaKey.publicKey]
        for url in urls {
            let signed = try CloudFrontSignedURL(try CDNURL(parsing: url))
            let facts = CDNRequestFacts(url: try CDNURL(parsing: url), now: 1_800_000_050, clientIP: "10.1.200.3")
            _ = try signed.token.verify(keys: keys, facts: facts)
            #expect(throws: CDNRefusal.self) {
                _ = try signed.token.verify(keys: keys, facts: CDNRequestFacts(url: facts.url, now: 1_800_000_100, clientIP: "10.1.200.3"))
            }
        }
        let custom = try CloudFrontSignedURL(try CDNURL(parsing: urls[1])).token
        let early = CDNRequestFacts(url: try CDNURL(parsing: urls[1]), now: 1_799_999_999, clientIP: "10.1.200.3")
        #expect(Self.status { _ = try custom.verify(keys: keys, facts: early) } == .tokenNotYetValid)
        let elsewhere = CDNRequestFacts(url: try CDNURL(parsing: urls[1]), now: 1_800_000_050, clientIP: "10.2.0.1")
        #expect(Self.status { _ = try custom.verify(keys: keys, facts: elsewhere) } == .ipMismatch)
    }

    static func status(_ body: () throws -> Void) -> CDNStatus? {
        do {
            try body()
            return nil
        } catch {
            return (error as? CDNRefusal)?.status
        }
    }
}
