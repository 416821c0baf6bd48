import Foundation
import Testing

@testable import CDNTokens

/// nginx secure_link_md5 values the openssl command line made, exactly as the
/// nginx documentation shows (Fixtures/SecureLink/secure-link-vectors.json,
/// written by make-secure-link-vectors.py beside it).
@Suite struct SecureLinkKnownAnswerTests {
    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let expression: String
        let secret: String
        let expires: Int64
        let uri: String?
        let remote_addr: String?
        let folder: String?
        let hashed: String
        let md5: String
        var testDescription: String { name }

        /// The request: the URL itself, or a segment in the folder.
        func facts(now: Int64) throws -> CDNRequestFacts {
            CDNRequestFacts(
                url: try CDNURL(parsing: "https://edge.example.test" + (uri ?? (folder ?? "/") + "seg/00001.ts")),
                now: now,
                clientIP: remote_addr,
                leeway: 30
            )
        }
    }

    static let vectors: [Vector] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/SecureLink/secure-link-vectors.json")
        struct Document: Decodable { let vectors: [Vector] }
        do { return try JSONDecoder().decode(Document.self, from: Data(contentsOf: file)).vectors } catch {
            fatalError("cannot read \(file.path): \(error)")
        }
    }()

    @Test("the documentation's own example is among them")
    func docsExample() {
        #expect(Self.vectors.contains { $0.hashed == "2147483647/s/link127.0.0.1 secret" && $0.md5 == "_e4Nc3iduzkWRm01TBBNYw" })
        #expect(Self.vectors.count >= 7)
    }

    @Test("we hash the same text and write the same md5", arguments: vectors)
    func sameDigest(_ vector: Vector) throws {
        let expression = try SecureLinkExpression(parsing: vector.expression)
        let values = SecureLinkValues(
            expires: vector.expires,
            uri: vector.uri.map { Array($0.utf8) },
            remoteAddress: vector.remote_addr,
            folder: vector.folder.map { Array($0.utf8) },
            secret: Array(vector.secret.utf8)
        )
        #expect(String(decoding: expression.hashedBytes(values), as: UTF8.self) == vector.hashed)
        let token = SecureLinkToken(md5: try SecureLinkDigest.md5(expression.hashedBytes(values)), expires: vector.expires)
        #expect(token.md5Text == vector.md5)
        #expect(try SecureLinkToken(md5: vector.md5, expires: String(vector.expires)) == token)
    }

    @Test("our issuer makes the same token for the same inputs", arguments: vectors)
    func issuerMatches(_ vector: Vector) throws {
        let url = try CDNURL(parsing: "https://edge.example.test" + (vector.uri ?? (vector.folder ?? "/") + "master.m3u8"))
        let parameters = CDNIssueParameters(
            url: url,
            scope: vector.uri == nil ? .folder : .url,
            now: vector.expires - 3600,
            lifetime: 3600,
            clientIP: vector.remote_addr
        )
        let token = try SecureLinkIssuer.issue(
            parameters,
            expression: SecureLinkExpression(parsing: vector.expression),
            secret: Array(vector.secret.utf8)
        )
        #expect(token.md5Text == vector.md5)
        #expect(token.queryString == "md5=\(vector.md5)&expires=\(vector.expires)")
    }

    @Test("our verifier accepts each, with the folder given or found", arguments: vectors)
    func verifierAccepts(_ vector: Vector) throws {
        let token = try SecureLinkToken(md5: vector.md5, expires: String(vector.expires))
        let expression = try SecureLinkExpression(parsing: vector.expression)
        let secret = Array(vector.secret.utf8)
        let found = try token.verify(expression: expression, secret: secret, facts: vector.facts(now: vector.expires))
        #expect(found.folder == vector.folder)
        if let folder = vector.folder {
            #expect(
                try token.verify(expression: expression, secret: secret, facts: vector.facts(now: vector.expires - 10), folder: folder).folder
                    == folder
            )
        }
        RefusalExpectation.expect(.invalidSignature) {
            try token.verify(expression: expression, secret: secret + [0x21], facts: vector.facts(now: vector.expires))
        }
        RefusalExpectation.expect(.tokenExpired, naming: "\(vector.expires)", "no leeway") {
            try token.verify(expression: expression, secret: secret, facts: vector.facts(now: vector.expires + 1))
        }
    }
}
