import Foundation
import IntegrationSupport
import Testing

/// Software statements signed by an implementation we did not write (docs/DESIGN.md#software-statements):
/// PyJWT with `cryptography`, from PyPI. Each case is made by PyJWT, judged by
/// PyJWT (`jwt.decode` with the trusted key, 30 s leeway), and then by
/// `tokeninspect verify`; the verdicts must match each other and what the case
/// is for. Skipped, naming the packages, when the venv `scripts/test` makes is
/// missing (run under TOKENINSPECT_INTEGRATION=require, it fails instead).
@Suite(
    .enabled(
        if: IndependentPython.available(["jwt", "cryptography"]),
        "PyJWT and cryptography not installed: pip install PyJWT cryptography into ~/.cache/tokeninspect-venv (scripts/test --yes does)"
    )
)
struct SoftwareStatementCrossCheckTests {
    struct Case: Decodable {
        var name: String
        var token: String
        var key: String
        var pyjwt: String
    }

    static let expected: [String: String] = [
        "RS256": "VALID_TOKEN", "PS256": "VALID_TOKEN", "ES256": "VALID_TOKEN", "ES384": "VALID_TOKEN", "EdDSA": "VALID_TOKEN",
        "ES384 against a P-256 key": "INVALID_SIGNATURE",
        "RS256 by another key": "INVALID_SIGNATURE", "ES256 against an RSA key": "INVALID_SIGNATURE",
        "expired": "TOKEN_EXPIRED", "iat in the future": "TOKEN_NOT_YET_VALID", "nbf in the future": "TOKEN_NOT_YET_VALID",
        "alg none": "INVALID_SIGNATURE", "HS256 with the public key as secret": "INVALID_SIGNATURE",
        "jwk header": "INVALID_SIGNATURE", "tampered claims": "INVALID_SIGNATURE",
    ]

    static let script = #"""
        import base64, hashlib, hmac, json, sys, time
        import jwt
        from jwt.algorithms import RSAAlgorithm
        from cryptography.hazmat.primitives import serialization

        root = sys.argv[1]
        now = int(time.time())
        def key(name): return open(f"{root}/{name}" if "/" in name else f"{root}/Samples/keys/{name}").read()
        def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
        claims = {"software_id": "cross-check", "iss": "pyjwt", "aud": ["a", "b"], "iat": now - 10, "exp": now + 3600}
        p384 = "Tests/EntitlementTokensTests/Fixtures/Keys/test-p384"  # statements only (docs/DESIGN.md#software-statements): not among the token samples
        trusted = {"rsa": "Samples/keys/trusted/test-rsa2048.pub.pem", "p256": "Samples/keys/trusted/test-p256.pub.pem",
                   "p384": f"{p384}.pub.pem", "ed25519": "Samples/keys/trusted/test-ed25519.pub.pem"}
        cases = []
        def case(name, token, trust):
            public = key(trust)
            try:
                jwt.decode(token, public, algorithms=["RS256", "PS256", "ES256", "ES384", "EdDSA"], leeway=30, options={"verify_aud": False})
                verdict = "VALID_TOKEN"
            except jwt.ExpiredSignatureError: verdict = "TOKEN_EXPIRED"
            except jwt.ImmatureSignatureError: verdict = "TOKEN_NOT_YET_VALID"
            except (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError, jwt.InvalidKeyError): verdict = "INVALID_SIGNATURE"
            except jwt.DecodeError as error: verdict = "INVALID_SIGNATURE" if "signature" in str(error).lower() else "INVALID_TOKEN_FORMAT"
            cases.append({"name": name, "token": token, "key": trust, "pyjwt": verdict})

        case("RS256", jwt.encode(claims, key("test-rsa2048.pem"), algorithm="RS256", headers={"kid": "r1"}), trusted["rsa"])
        case("PS256", jwt.encode(claims, key("test-rsa2048.pem"), algorithm="PS256"), trusted["rsa"])
        case("ES256", jwt.encode(claims, key("test-p256.pem"), algorithm="ES256"), trusted["p256"])
        case("ES384", jwt.encode(claims, key(f"{p384}.pem"), algorithm="ES384"), trusted["p384"])
        case("ES384 against a P-256 key", jwt.encode(claims, key(f"{p384}.pem"), algorithm="ES384"), trusted["p256"])
        case("EdDSA", jwt.encode(claims, key("test-ed25519.pem"), algorithm="EdDSA"), trusted["ed25519"])
        case("RS256 by another key", jwt.encode(claims, key("test-untrusted-rsa2048.pem"), algorithm="RS256"), trusted["rsa"])
        case("ES256 against an RSA key", jwt.encode(claims, key("test-p256.pem"), algorithm="ES256"), trusted["rsa"])
        case("expired", jwt.encode(dict(claims, exp=now - 120), key("test-rsa2048.pem"), algorithm="RS256"), trusted["rsa"])
        case("iat in the future", jwt.encode(dict(claims, iat=now + 600, exp=now + 3600), key("test-rsa2048.pem"), algorithm="RS256"), trusted["rsa"])
        case("nbf in the future", jwt.encode(dict(claims, nbf=now + 600), key("test-rsa2048.pem"), algorithm="RS256"), trusted["rsa"])
        case("alg none", jwt.encode(claims, None, algorithm="none"), trusted["rsa"])
        # HS256 keyed with the trusted RSA public key's PEM: PyJWT will not make it, so by hand.
        header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64(json.dumps(claims).encode())
        mac = hmac.new(key(trusted["rsa"]).encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
        case("HS256 with the public key as secret", f"{header}.{payload}.{b64(mac)}", trusted["rsa"])
        # A `jwk` header carrying the signer's own (untrusted) key.
        untrusted = serialization.load_pem_private_key(key("test-untrusted-rsa2048.pem").encode(), None).public_key()
        jwk = json.loads(RSAAlgorithm.to_jwk(untrusted))
        case("jwk header", jwt.encode(claims, key("test-untrusted-rsa2048.pem"), algorithm="RS256", headers={"jwk": jwk}), trusted["rsa"])
        good = jwt.encode(claims, key("test-rsa2048.pem"), algorithm="RS256")
        h, p, s = good.split(".")
        case("tampered claims", ".".join([h, b64(json.dumps(dict(claims, software_id="other")).encode()), s]), trusted["rsa"])
        print(json.dumps(cases))
        """#

    @Test func verdictsMatchPyJWT() throws {
        let output = try IndependentPython.run(Self.script, arguments: [CLI.packageRoot.path])
        let cases = try JSONDecoder().decode([Case].self, from: Data(output.utf8))
        #expect(Set(cases.map(\.name)) == Set(Self.expected.keys))
        for item in cases {
            #expect(item.pyjwt == Self.expected[item.name], "PyJWT: \(item.name) is \(item.pyjwt)")
            let result = try CLI.run(["verify", "--format", "jsonl", "--key", item.key, item.token])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let status = object?["status"] as? String
            #expect(
                status == item.pyjwt,
                "\(item.name): tokeninspect says \(status ?? "nothing") (\(object?["reason"] ?? result.stderr)), PyJWT \(item.pyjwt)"
            )
            #expect(object?["kind"] as? String == "software-statement")
            #expect(result.status == (item.pyjwt == "VALID_TOKEN" ? 0 : 1), "\(item.name): exit \(result.status)")
        }
    }

    /// The other way: a statement `tokeninspect mint` signs verifies in PyJWT,
    /// with the JWKS mint wrote, and its claims read back the same.
    @Test(arguments: ["test-rsa2048.pem", "test-p256.pem", "test-ed25519.pem"])
    func mintedStatementsVerifyInPyJWT(key: String) throws {
        let jwks = FileManager.default.temporaryDirectory.appendingPathComponent("mint-\(UUID().uuidString).jwks")
        defer { try? FileManager.default.removeItem(at: jwks) }
        let minted = try CLI.run([
            "mint", "software-statement", "--key", "Samples/keys/\(key)", "--kid", "m1", "--software-id", "app",
            "--aud", "https://x.test", "--ttl", "1h", "--claim", "n=[1,2]", "--jwks-out", jwks.path,
        ])
        try #require(minted.status == 0, "\(minted.stderr)")
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let check = #"""
            import json, sys, jwt
            keys = jwt.PyJWKSet.from_json(open(sys.argv[1]).read())
            header = jwt.get_unverified_header(sys.argv[2])
            key = [k for k in keys.keys if k.key_id == header["kid"]][0]
            print(json.dumps(jwt.decode(sys.argv[2], key, algorithms=[header["alg"]], audience="https://x.test")))
            """#
        let claims = try IndependentPython.run(check, arguments: [jwks.path, token])
        let object = try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any]
        #expect(object?["software_id"] as? String == "app")
        #expect(object?["n"] as? [Int] == [1, 2])
        let verified = try CLI.run(["verify", "--key", jwks.path, token])
        #expect(verified.status == 0, "\(verified.stdout)")
    }
}
