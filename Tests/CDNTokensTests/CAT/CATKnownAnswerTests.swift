import Foundation
import Testing

@testable import CDNTokens

/// Known answers from the format's own tools (Fixtures/CAT/make_cat_vectors.py:
/// python-cwt 3.3 and pycose) and from independent implementations' published
/// vectors (Fixtures/CAT/independent_vectors.json: node-cat, the
/// `common-access-token` crate).
@Suite("CAT known answers")
struct CATKnownAnswerTests {
    nonisolated(unsafe) static let vectors = try! CATFixtures.json("cat_vectors.json")
    nonisolated(unsafe) static let issued = vectors["issued"] as! [[String: Any]]
    nonisolated(unsafe) static let peer = vectors["peer"] as! [[String: Any]]
    nonisolated(unsafe) static let independent = (try! CATFixtures.json("independent_vectors.json"))["vectors"] as! [[String: Any]]

    static func parameters(_ vector: [String: Any]) -> CDNIssueParameters {
        CDNIssueParameters(
            url: CATFixtures.url(vector["url"] as! String),
            scope: CDNScope(rawValue: vector["scope"] as! String)!,
            now: (vector["now"] as! NSNumber).int64Value,
            lifetime: (vector["lifetime"] as! NSNumber).int64Value,
            leeway: (vector["leeway"] as! NSNumber).int64Value,
            clientIP: vector["clientIP"] as? String
        )
    }

    @Test("our HMAC token is pycose's, byte for byte", arguments: 0..<3)
    func issuedMac0(_ index: Int) throws {
        let vector = Self.issued[index]
        let ours = try CommonAccessTokenIssuer.issue(
            Self.parameters(vector),
            issuer: vector["issuer"] as! String,
            key: CATFixtures.hmacKey(),
            cti: CATFixtures.hex(vector["cti"] as! String)
        )
        #expect(ours == vector["mac0"] as! String, "\(vector["name"]!)")
    }

    @Test("our ES256 token signs pycose's bytes, and pycose's signature verifies here", arguments: 0..<3)
    func issuedSign1(_ index: Int) throws {
        let vector = Self.issued[index]
        let parameters = Self.parameters(vector)
        let key = try CATFixtures.es256Key()
        let message = try CommonAccessTokenIssuer.message(
            parameters,
            issuer: vector["issuer"] as! String,
            key: key,
            cti: CATFixtures.hex(vector["cti"] as! String)
        )
        #expect(message.structure == .sign1 && message.hasCOSETag && !message.hasCWTTag)
        #expect(message.toBeAuthenticated == CATFixtures.hex(vector["sign1ToBeSigned"] as! String))
        let theirs = try UnverifiedCommonAccessToken(text: vector["sign1"] as! String)
        #expect(theirs.message.toBeAuthenticated == message.toBeAuthenticated)
        let facts = CDNRequestFacts(url: parameters.url, now: parameters.now, clientIP: parameters.clientIP)
        let verified = try theirs.verify(
            keys: [try CATFixtures.es256Key(id: "edge-es", file: "es256-public.pem")],
            facts: facts,
            expectedIssuer: vector["issuer"] as? String
        )
        #expect(verified.cti == CATFixtures.hex(vector["cti"] as! String))
        #expect(verified.keyID == "edge-es")
    }

    @Test("the issued layout: alg protected, kid unprotected, claims in order")
    func issuedLayout() throws {
        let vector = Self.issued[1]
        let token = try UnverifiedCommonAccessToken(text: vector["mac0"] as! String)
        #expect(token.textEncoding == .base64url)
        #expect(token.message.protectedHeaderBytes == [0xA1, 0x01, 0x05])
        #expect(token.message.keyID == Array("edge-1".utf8))
        #expect(token.token.claims.map { CATClaim.describe($0.key) } == ["iss", "iat", "nbf", "exp", "cti", "catv", "catu", "catnip"])
        #expect(
            token.token.diagnostic
                == "{1 /iss/: \"requestor-1\", 6 /iat/: 1768478400, 5 /nbf/: 1768478370, 4 /exp/: 1768479000, 7 /cti/: h'0f0e0d0c0b0a09080706050403020100', 310 /catv/: 1, 312 /catu/: {3 /path/: {0 /exact/: \"/vod/movie.mp4\"}}, 311 /catnip/: [52(h'c0000221')]}"
        )
        #expect(token.diagnostic.hasPrefix("17([<<{1 /alg/: 5}>>, {4 /kid/: h'656467652d31'}, <<{1 /iss/: \"requestor-1\""))
    }

    static let peerChecks: [(Int, Int)] = peer.indices.flatMap { vector in
        (peer[vector]["checks"] as! [[String: Any]]).indices.map { (vector, $0) }
    }

    @Test("python-cwt's and pycose's tokens: read, verified, and judged", arguments: peerChecks)
    func peerTokens(_ vectorIndex: Int, _ checkIndex: Int) throws {
        let vector = Self.peer[vectorIndex]
        let check = (vector["checks"] as! [[String: Any]])[checkIndex]
        let token = try UnverifiedCommonAccessToken(text: vector["token"] as! String)
        #expect(token.message.hasCWTTag == (vector["cwtTag"] as! Bool))
        #expect(token.message.hasCOSETag == (vector["coseTag"] as! Bool))
        #expect(token.message.structure == (vector["key"] as! String == "hmac" ? .mac0 : .sign1))
        #expect(token.token.issuer == vector["iss"] as? String)
        #expect(token.token.cti == CATFixtures.hex(vector["cti"] as! String))
        #expect(token.token.replay?.rawValue == (vector["catreplay"] as! NSNumber).int64Value)
        let keys = [try CATFixtures.hmacKey(), try CATFixtures.es256Key(id: "edge-es", file: "es256-public.pem")]
        let facts = CDNRequestFacts(
            url: CATFixtures.url(check["url"] as! String),
            now: (check["now"] as! NSNumber).int64Value,
            clientIP: check["clientIP"] as? String,
            method: check["method"] as! String
        )
        let status = CATFixtures.status { () throws(CDNRefusal) in
            let verified = try token.verify(keys: keys, facts: facts, expectedIssuer: "cdn-issuer")
            #expect(verified.claims == token.token.claims)
        }
        #expect(status.rawValue == check["status"] as! String, "\(vector["name"]!) with \(check)")
    }

    static let independentChecks: [(Int, Int)] = independent.indices.flatMap { vector in
        let checks = independent[vector]["checks"] as! [[String: Any]]
        return checks.isEmpty ? [(vector, -1)] : checks.indices.map { (vector, $0) }
    }

    @Test("node-cat's and the common-access-token crate's published vectors", arguments: independentChecks)
    func independentVectors(_ vectorIndex: Int, _ checkIndex: Int) throws {
        let vector = Self.independent[vectorIndex]
        if let readStatus = vector["readStatus"] as? String {
            #expect(
                CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(text: vector["token"] as! String) }.rawValue
                    == readStatus
            )
            return
        }
        let token = try UnverifiedCommonAccessToken(text: vector["token"] as! String)
        #expect(token.message.hasCWTTag == (vector["cwtTag"] as! Bool))
        #expect(token.message.keyID.map { String(decoding: $0, as: UTF8.self) } == vector["kid"] as? String)
        #expect(token.token.issuer == vector["iss"] as? String)
        let check = (vector["checks"] as! [[String: Any]])[checkIndex]
        let hex = (check["hmacKeyHex"] ?? vector["hmacKeyHex"]) as! String
        let key = CATKey(insecureHMACKeyBytes: CATFixtures.hex(hex), id: vector["keyID"] as? String)
        let facts = CDNRequestFacts(url: (check["url"] as? String).map(CATFixtures.url), now: (check["now"] as! NSNumber).int64Value)
        let status = CATFixtures.status { () throws(CDNRefusal) in
            _ = try token.verify(
                keys: [key],
                facts: facts,
                expectedIssuer: check["expectedIssuer"] as? String,
                expectedAudience: check["expectedAudience"] as? String
            )
        }
        #expect(status.rawValue == check["status"] as! String, "\(vector["name"]!) with \(check)")
    }

    @Test("node-cat's tag-259 maps are read as the maps they wrap")
    func tag259() throws {
        let vector = Self.independent.first { ($0["name"] as! String).contains("tag-259") }!
        let token = try UnverifiedCommonAccessToken(text: vector["token"] as! String)
        #expect(token.textEncoding == .base64)
        #expect(
            token.token.diagnostic
                == "{1 /iss/: \"eyevinn\", 312 /catu/: {0 /scheme/: {0 /exact/: \"https\"}, 3 /path/: {1 /prefix/: \"/content\"}, 8 /extension/: {0 /exact/: \".m3u8\"}}}"
        )
        #expect(token.message.unprotectedHeader == [CBORMapEntry(.text("4"), .bytes(Array("Symmetric256".utf8)))])
        #expect(token.diagnostic.contains("<<259({1 /iss/: \"eyevinn\""), "the payload is shown as written, tags and all")
    }
}
