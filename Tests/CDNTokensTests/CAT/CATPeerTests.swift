import Foundation
import IntegrationSupport
import Testing

@testable import CDNTokens

/// Live cross-checks with python-cwt 3.3 and pycose (PyPI), both ways:
/// ours decoded and verified by them, theirs verified here, and a tampered
/// token refused on both sides.
@Suite("CAT against python-cwt and pycose", .enabled(if: IndependentPython.available(["cwt", "pycose", "cbor2"]), "pip install cwt pycose"))
struct CATPeerTests {
    static let fixtures = CATFixtures.directory.path

    /// Reads a token on argv[1] with python-cwt and pycose; prints the claims
    /// as JSON (bytes as hex, tags as [tag, value]), or "refused: …".
    static let verifyScript = #"""
        import sys, json, base64, cbor2, cwt
        from cwt import COSEKey
        from pycose.messages import CoseMessage
        from pycose.keys import SymmetricKey, EC2Key
        from pycose.headers import KID
        from cryptography.hazmat.primitives import serialization
        token, kind, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        def plain(v):
            if isinstance(v, bytes): return v.hex()
            if isinstance(v, cbor2.CBORTag): return [v.tag, plain(v.value)]
            if isinstance(v, dict): return {str(k): plain(x) for k, x in v.items()}
            if isinstance(v, list): return [plain(x) for x in v]
            return v
        try:
            if kind == "hmac":
                key = bytes.fromhex(open(fixtures + "/hmac.hex").read().strip())
                claims = cwt.decode(raw, COSEKey.from_symmetric_key(key, alg="HS256", kid="edge-1"))
                message = CoseMessage.decode(raw); message.key = SymmetricKey(k=key)
                ok = message.verify_tag()
            else:
                pem = open(fixtures + "/es256-public.pem", "rb").read()
                claims = cwt.decode(raw, COSEKey.from_pem(pem, alg="ES256", kid="edge-es"))
                public = serialization.load_pem_public_key(pem).public_numbers()
                message = CoseMessage.decode(raw)
                message.key = EC2Key(crv="P_256", x=public.x.to_bytes(32, "big"), y=public.y.to_bytes(32, "big"))
                ok = message.verify_signature()
            if not ok: raise Exception("pycose: bad tag or signature")
            print(json.dumps(dict(claims=plain(claims), kid=message.uhdr.get(KID, message.phdr.get(KID, b"")).decode(), tag=raw[0])))
        except Exception as error:
            print("refused: %s" % type(error).__name__)
        """#

    /// Makes a token with python-cwt: argv kind, now; prints base64url.
    static let issueScript = #"""
        import sys, base64, cbor2, cwt
        from cwt import COSEKey
        kind, now, fixtures = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        claims = {1: "cwt-peer", 4: now + 600, 7: bytes.fromhex("c0ffee"), 308: 1, 310: 1,
                  312: {3: {1: "/live/"}, 8: {0: ".m4s"}}, 313: ["GET"], 311: [cbor2.CBORTag(54, [32, bytes.fromhex("20010db8")])]}
        if kind == "hmac":
            key = COSEKey.from_symmetric_key(bytes.fromhex(open(fixtures + "/hmac.hex").read().strip()), alg="HS256", kid="edge-1")
            token = cwt.encode_and_mac(claims, key, tagged=True)
        else:
            key = COSEKey.from_pem(open(fixtures + "/es256-private.pem", "rb").read(), alg="ES256", kid="edge-es")
            token = cwt.encode_and_sign(claims, key)
        print(base64.urlsafe_b64encode(token).rstrip(b"=").decode())
        """#

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test("our tokens are verified by python-cwt and pycose, with the claims we wrote", arguments: ["hmac", "es256"])
    func oursVerifiedByThem(_ kind: String) throws {
        let key = kind == "hmac" ? try CATFixtures.hmacKey() : try CATFixtures.es256Key()
        let parameters = CDNIssueParameters(
            url: CATFixtures.url("https://cdn.example.com/hls/tnt/master.m3u8"),
            scope: .folder,
            now: Self.now,
            lifetime: 600,
            leeway: 30,
            clientIP: "192.0.2.44"
        )
        let text = try CommonAccessTokenIssuer.issue(parameters, issuer: "tokengate", key: key, cti: Array(0..<16))
        let output = try IndependentPython.run(Self.verifyScript, arguments: [text, kind, Self.fixtures])
        let result = try JSONSerialization.jsonObject(with: Data(output.utf8)) as! [String: Any]
        let claims = result["claims"] as! [String: Any]
        #expect(result["kid"] as? String == key.id)
        #expect(result["tag"] as? Int == (kind == "hmac" ? 0xD1 : 0xD2))
        #expect(claims["1"] as? String == "tokengate")
        #expect((claims["4"] as? NSNumber)?.int64Value == parameters.expires)
        #expect((claims["5"] as? NSNumber)?.int64Value == parameters.now - 30)
        #expect(claims["7"] as? String == "000102030405060708090a0b0c0d0e0f")
        #expect(claims["310"] as? Int == 1)
        #expect(((claims["312"] as? [String: Any])?["3"] as? [String: Any])?["1"] as? String == "/hls/tnt/")
        #expect(((claims["311"] as? [Any])?.first as? [Any])?.first as? Int == 52)
    }

    @Test("catr as we write it is read back by python-cwt as written, and a renewal verifies with its new cti and exp", arguments: ["hmac", "es256"])
    func catrReadByThem(_ kind: String) throws {
        let key = kind == "hmac" ? try CATFixtures.hmacKey() : try CATFixtures.es256Key()
        let now = Self.now
        let parameters = CDNIssueParameters(
            url: CATFixtures.url("https://cdn.example.com/hls/tnt/master.m3u8"),
            scope: .folder,
            now: now - 560,
            lifetime: 600,
            leeway: 30
        )
        let renewal = CATRenewal(type: .header, expAdd: 900, deadline: 60, headerName: "CTA-Common-Access-Token")
        let original = try CommonAccessTokenIssuer.claims(for: parameters, issuer: "tokengate", renewal: renewal, cti: Array(0..<16))
        let issued = CATTextEncoding.base64url(try CommonAccessTokenIssuer.message(claims: original, key: key).cbor())
        let read = try JSONSerialization.jsonObject(
            with: Data(try IndependentPython.run(Self.verifyScript, arguments: [issued, kind, Self.fixtures]).utf8)
        )
        let catr = ((read as? [String: Any])?["claims"] as? [String: Any])?["323"] as? [String: Any]
        #expect(catr?["0"] as? Int == 2 && catr?["1"] as? Int == 900 && catr?["2"] as? Int == 60)
        #expect(catr?["4"] as? String == "CTA-Common-Access-Token" && catr?.count == 4)

        // The renewal the gate makes (CATOrigin calls this): python-cwt checks its exp against its own clock.
        let renewed = try CommonAccessTokenIssuer.renewal(of: original, now: now, key: key, cti: Array(repeating: 0xAB, count: 16))
        let output = try IndependentPython.run(Self.verifyScript, arguments: [renewed, kind, Self.fixtures])
        let claims = try #require(
            ((try JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any])?["claims"] as? [String: Any],
            "\(output)"
        )
        #expect(claims["7"] as? String == String(repeating: "ab", count: 16))
        #expect((claims["6"] as? NSNumber)?.int64Value == now)
        #expect((claims["4"] as? NSNumber)?.int64Value == now + 900)
        #expect((claims["5"] as? NSNumber)?.int64Value == now - 590, "nbf as it was")
        #expect((claims["323"] as? [String: Any])?["1"] as? Int == 900)
    }

    @Test("a tampered token of ours is refused by python-cwt", arguments: ["hmac", "es256"])
    func oursTamperedRefusedByThem(_ kind: String) throws {
        let key = kind == "hmac" ? try CATFixtures.hmacKey() : try CATFixtures.es256Key()
        let parameters = CDNIssueParameters(
            url: CATFixtures.url("https://cdn.example.com/hls/tnt/master.m3u8"),
            scope: .folder,
            now: Self.now,
            lifetime: 600
        )
        let message = try CommonAccessTokenIssuer.message(parameters, issuer: "tokengate", key: key, cti: [1])
        var payload = message.payload
        payload[payload.count - 2] ^= 0x01  // inside the catu path
        let tampered = COSEMessage(
            structure: message.structure,
            protectedHeader: message.protectedHeader,
            unprotectedHeader: message.unprotectedHeader,
            payload: payload,
            authenticationTag: message.authenticationTag
        )
        let text = CATTextEncoding.base64url(tampered.cbor())
        let output = try IndependentPython.run(Self.verifyScript, arguments: [text, kind, Self.fixtures])
        #expect(output.hasPrefix("refused"))
    }

    @Test("python-cwt's tokens are verified here; tampered, refused", arguments: ["hmac", "es256"])
    func theirsVerifiedByUs(_ kind: String) throws {
        let now = Self.now
        let text = try IndependentPython.run(Self.issueScript, arguments: [kind, String(now), Self.fixtures]).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let token = try UnverifiedCommonAccessToken(text: text)
        let keys = [try CATFixtures.hmacKey(), try CATFixtures.es256Key(id: "edge-es", file: "es256-public.pem")]
        let facts = CDNRequestFacts(url: CATFixtures.url("https://cdn.example.com/live/ch1/seg-5.m4s"), now: now, clientIP: "2001:db8:1::9")
        let verified = try token.verify(keys: keys, facts: facts, expectedIssuer: "cwt-peer")
        #expect(verified.replay == .prohibited)
        #expect(verified.cti == [0xC0, 0xFF, 0xEE])
        var other = facts
        other.clientIP = "2001:db9::1"
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try token.verify(keys: keys, facts: other) } == .ipMismatch)
        other = facts
        other.url = CATFixtures.url("https://cdn.example.com/live/ch1/seg-5.ts")
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try token.verify(keys: keys, facts: other) } == .urlNotCovered)
        var bytes = token.message.cbor()
        bytes[bytes.count - 5] ^= 0x40
        let tampered = try UnverifiedCommonAccessToken(cbor: bytes)
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try tampered.verify(keys: keys, facts: facts) } == .invalidSignature)
    }
}
