import CDNTokens
import EntitlementTokens
import Foundation
import Testing

/// botocore's own output (Fixtures/CloudFront/vectors.json, made by make_vectors.py
/// beside it): our issuer makes the same URL byte for byte, our reader and
/// verifier accept every one, on both carriers.
@Suite("CloudFront known answers (botocore)")
struct CloudFrontKnownAnswerTests {
    typealias Vector = CloudFrontFixtures.Vector

    @Test("the issuer makes botocore's signed URL, policy and cookies byte for byte", arguments: CloudFrontFixtures.issuedVectors)
    func issueMatchesBotocore(_ vector: Vector) throws {
        let issue = try #require(vector.issue)
        let parameters = CDNIssueParameters(
            url: try CDNURL(parsing: vector.url),
            scope: CDNScope(rawValue: issue.scope)!,
            now: issue.now,
            lifetime: issue.lifetime,
            clientIP: issue.clientIP
        )
        let issued = try CloudFrontFixtures.issuer.issue(parameters)
        #expect(issued.signedURL == vector.signedURL)
        #expect(String(decoding: issued.signedPolicy, as: UTF8.self) == vector.policy)
        #expect(issued.policy.json == Array(vector.policy.utf8))
        #expect(issued.cookies == vector.cookiePairs)
        if case .canned = issued.token.policy { #expect(vector.canned) } else { #expect(!vector.canned) }
    }

    @Test("botocore's signed URL reads and verifies", arguments: CloudFrontFixtures.vectors)
    func botocoreURLVerifies(_ vector: Vector) throws {
        let signed = try CloudFrontSignedURL(try CDNURL(parsing: vector.signedURL))
        #expect(signed.unsignedURL.description == vector.url)
        let facts = CDNRequestFacts(url: try CDNURL(parsing: vector.signedURL), now: vector.expires - 10, clientIP: clientIP(for: vector))
        let verified = try signed.token.verify(keys: CloudFrontFixtures.keys(for: vector), facts: facts)
        #expect(verified.signedPolicy == Array(vector.policy.utf8))
        #expect(verified.policy.dateLessThan == vector.expires)
        #expect(verified.policy.resource == vector.resource ?? vector.url)
        #expect(verified.policy.dateGreaterThan == vector.starts)
        // The URL's own pairs re-encode to what botocore wrote.
        let rebuilt =
            vector.url + (vector.url.contains("?") ? "&" : "?")
            + signed.token.pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        #expect(rebuilt == vector.signedURL)
    }

    @Test("the same values as cookies verify against the URL asked for", arguments: CloudFrontFixtures.vectors)
    func botocoreCookiesVerify(_ vector: Vector) throws {
        let token = try CloudFrontToken(cookiePairs: [CDNField("session", "x")] + vector.cookiePairs)
        #expect(token.carrier == .cookie)
        #expect(token.pairs == vector.cookiePairs)
        let facts = CDNRequestFacts(url: try CDNURL(parsing: vector.url), now: vector.expires - 10, clientIP: clientIP(for: vector))
        let verified = try token.verify(keys: CloudFrontFixtures.keys(for: vector), facts: facts)
        #expect(verified.signedPolicy == Array(vector.policy.utf8))
    }

    @Test("a custom policy reads back to botocore's bytes through our writer", arguments: CloudFrontFixtures.vectors.filter { !$0.canned })
    func customPolicyRoundTrips(_ vector: Vector) throws {
        let policy = try CloudFrontPolicy(json: Array(vector.policy.utf8))
        #expect(policy.json == Array(vector.policy.utf8))
        #expect(policy.resource == vector.resource)
        #expect(policy.ipAddress?.text == vector.ip.map { $0.contains("/") ? $0 : $0 + "/32" })
    }

    @Test("the vectors cover what the brief names")
    func vectorsCoverTheCases() {
        let names = Set(CloudFrontFixtures.vectors.map(\.name))
        for name in [
            "canned", "custom, folder wildcard", "custom, folder wildcard with IP", "custom with DateGreaterThan and a subnet",
            "canned with an existing query", "canned, SHA-256", "custom, ECDSA P-256",
        ] {
            #expect(names.contains(name), "missing vector \(name)")
        }
        #expect(CloudFrontFixtures.issuedVectors.count >= 6)
    }

    /// An address inside the vector's `IpAddress`, or nil when it binds none.
    private func clientIP(for vector: Vector) -> String? {
        guard let ip = vector.ip else { return nil }
        if ip == "192.0.2.0/24" { return "192.0.2.200" }
        return String(ip.split(separator: "/")[0])
    }
}
