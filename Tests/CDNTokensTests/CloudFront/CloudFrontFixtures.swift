import CDNTokens
import EntitlementTokens
import Foundation
import Testing

/// The known-answer vectors botocore made (Fixtures/CloudFront/make_vectors.py)
/// and the test-only keys beside them.
enum CloudFrontFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/CloudFront")

    static let keyPairID = "K2JCJMDEHXQW5F"
    static let rsaKeyPath = directory.appendingPathComponent("test-only-cloudfront-rsa2048.pem").path
    static let p256KeyPath = directory.appendingPathComponent("test-only-cloudfront-p256.pem").path

    static let rsaKey: SigningKey = try! SigningKey(path: rsaKeyPath)
    static let p256Key: SigningKey = try! SigningKey(path: p256KeyPath)
    static let issuer: CloudFrontIssuer = try! CloudFrontIssuer(key: rsaKey, keyPairID: keyPairID)

    static func keys(for vector: Vector) -> [String: PublicKey] {
        [keyPairID: vector.key == "p256" ? p256Key.publicKey : rsaKey.publicKey]
    }

    struct Issue: Decodable, Sendable {
        let scope: String
        let now: Int64
        let lifetime: Int64
        let clientIP: String?
    }

    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let url: String
        let resource: String?
        let expires: Int64
        let starts: Int64?
        let ip: String?
        let policy: String
        let canned: Bool
        let signedURL: String
        let cookies: [[String]]
        let issue: Issue?
        let key: String

        var cookiePairs: [CDNField] { cookies.map { CDNField($0[0], $0[1]) } }
        var testDescription: String { name }
    }

    private struct File: Decodable {
        let keyPairId: String
        let vectors: [Vector]
    }

    static let vectors: [Vector] = {
        let data = try! Data(contentsOf: directory.appendingPathComponent("vectors.json"))
        return try! JSONDecoder().decode(File.self, from: data).vectors
    }()

    static var issuedVectors: [Vector] { vectors.filter { $0.issue != nil } }
}

/// Lets a vector name itself in Swift Testing's argument list.
protocol CustomTestStringConvertible {}
