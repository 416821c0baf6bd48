import EntitlementTokens
import Foundation
import Testing

@testable import CDNTokens

/// Tokens of every kind made by the library's own issuers, as support
/// engineers would paste them, and the keys that verify them (the fixture
/// keys of the other suites).
enum ReadingFixtures {
    static let now: Int64 = 1_767_225_600
    static let url = "https://edge.example.test/hls/tnt/master.m3u8"
    static let segment = "https://edge.example.test/hls/tnt/seg/1.ts"
    static let elsewhere = "https://edge.example.test/hls/cnn/master.m3u8"
    static let clientIP = "203.0.113.7"

    static let akamaiHex = "52a152a152a152a152a152a152a152a1"
    static let secret = Array("secure-link-secret-for-the-tests-0123456789".utf8)
    static let folderExpression = "$secure_link_expires$folder $secret"

    static var catHMACFile: [UInt8] { get throws { [UInt8](try CATFixtures.data("hmac.hex")) } }
    static var cloudFrontKeyFile: [UInt8] { get throws { [UInt8](try Data(contentsOf: URL(fileURLWithPath: CloudFrontFixtures.rsaKeyPath))) } }

    static func parameters(
        _ url: String = url,
        scope: CDNScope = .folder,
        now: Int64 = now,
        lifetime: Int64 = 600,
        ip: String? = nil
    ) throws -> CDNIssueParameters {
        CDNIssueParameters(url: try CDNURL(parsing: url), scope: scope, now: now, lifetime: lifetime, clientIP: ip)
    }

    static func facts(_ url: String? = segment, now: Int64 = now + 60, ip: String? = nil) throws -> CDNRequestFacts {
        CDNRequestFacts(url: try url.map { try CDNURL(parsing: $0) }, now: now, clientIP: ip)
    }

    // MARK: Tokens

    static func akamai(_ parameters: CDNIssueParameters? = nil) throws -> String {
        try EdgeAuthIssuer.issue(parameters ?? Self.parameters(), key: EdgeAuthKey(hex: akamaiHex)).text
    }

    static func cloudFront(_ parameters: CDNIssueParameters? = nil) throws -> IssuedCloudFrontToken {
        try CloudFrontFixtures.issuer.issue(parameters ?? Self.parameters())
    }

    static func cat(_ parameters: CDNIssueParameters? = nil, key: CATKey? = nil) throws -> String {
        // A fixed cti: the same bytes on every run, so the text forms are known.
        try CommonAccessTokenIssuer.issue(
            parameters ?? Self.parameters(),
            issuer: "tokengate-tests",
            key: key ?? CATFixtures.hmacKey(),
            cti: Array(repeating: 0xFB, count: 16)
        )
    }

    /// A CAT with extra claims, MACed with the fixture key.
    static func cat(extraClaims: [CBORMapEntry]) throws -> String {
        let key = try CATFixtures.hmacKey()
        let claims = try CommonAccessTokenIssuer.claims(for: parameters(), issuer: "tokengate-tests", cti: Array(repeating: 7, count: 16))
        let unsigned = COSEMessage(
            structure: .mac0,
            protectedHeader: [CBORMapEntry(COSEMessage.algorithmLabel, .integer(key.algorithm.rawValue))],
            unprotectedHeader: [CBORMapEntry(COSEMessage.keyIDLabel, .bytes(Array("edge-1".utf8)))],
            payload: CBORValue.map(claims.claims + extraClaims).cbor(),
            authenticationTag: []
        )
        return CATTextEncoding.base64url(unsigned.with(authenticationTag: try CATAuthentication.authenticate(unsigned, with: key)).cbor())
    }

    static func secureLink(_ parameters: CDNIssueParameters? = nil) throws -> SecureLinkToken {
        try SecureLinkIssuer.issue(parameters ?? Self.parameters(), expression: SecureLinkExpression(parsing: folderExpression), secret: secret)
    }

    // MARK: Keys

    static func keys(_ kind: CDNTokenKind, keyID: String? = nil) throws -> CDNVerificationKeys {
        switch kind {
        case .akamai: try CDNVerificationKeys(kind: kind, keyFile: Array((akamaiHex + "\n").utf8), source: "akamai.key")
        case .cat: try CDNVerificationKeys(kind: kind, keyFile: catHMACFile, source: "hmac.hex", keyID: keyID)
        case .cloudfront: try CDNVerificationKeys(kind: kind, keyFile: cloudFrontKeyFile, source: "cloudfront.pem", keyID: keyID)
        case .nginxSecureLink: try CDNVerificationKeys(kind: kind, keyFile: secret, source: "secret", secureLinkExpression: folderExpression)
        }
    }

    /// The status `reading` gets from `keys` under `facts`, and the refusal's reason.
    static func verdict(_ reading: CDNReading, _ keys: CDNVerificationKeys, _ facts: CDNRequestFacts) -> (CDNStatus, String) {
        do {
            try reading.verify(keys: keys, facts: facts)
            return (.validToken, "")
        } catch {
            return (error.status, error.reason)
        }
    }

    /// The refusal reading `text` ends with (nil when it reads).
    static func readingRefusal(_ text: String, kind: CDNTokenKind? = nil) -> CDNRefusal? {
        do {
            _ = try CDNReading(text: text, kind: kind)
            return nil
        } catch {
            return error
        }
    }
}
