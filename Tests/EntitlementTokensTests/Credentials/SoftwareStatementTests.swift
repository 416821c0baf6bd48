import Foundation
import Testing

@testable import EntitlementTokens

/// Software statements (docs/DESIGN.md#software-statements): decoding, verification, refusals, JWKS keys.
/// The independent cross-check against PyJWT is in TokenInspectTests
/// (`SoftwareStatementCrossCheckTests`).
@Suite struct SoftwareStatementTests {
    static let now = TokenTimestamp(millisecondsSince1970: 1_780_000_000_000)!
    static let nowSeconds = 1_780_000_000

    static func claims(exp: Int? = nowSeconds + 3600, iat: Int? = nowSeconds - 60, extra: [JSONMember] = []) -> [JSONMember] {
        var claims = [
            JSONMember(name: "software_id", value: .string("4c1b1f5e-app")),
            JSONMember(name: "software_version", value: .string("3.2.1")),
            JSONMember(name: "iss", value: .string("auth.example.test")),
            JSONMember(name: "sub", value: .string("TestRequestor")),
            JSONMember(name: "aud", value: .string("https://api.example.test/register")),
        ]
        if let iat { claims.append(JSONMember(name: "iat", value: .number(String(iat)))) }
        if let exp { claims.append(JSONMember(name: "exp", value: .number(String(exp)))) }
        claims.append(JSONMember(name: "jti", value: .string("a1b2c3")))
        return claims + extra
    }

    static func verifier(_ keys: [JWSVerificationKey], leeway: Int64 = 30_000) -> SoftwareStatementVerifier {
        SoftwareStatementVerifier(keys: keys, leewayMilliseconds: leeway, clock: { now })
    }

    static func ringKey(_ name: String, options: KeyLoadingOptions = .init()) throws -> JWSVerificationKey {
        try JWSVerificationKey(SignatureFixtures.publicKey(name, options: options))
    }

    /// A JWKS of fixture public keys, each with a kid (and optionally an alg).
    static func keySet(_ entries: [(file: String, kid: String?, alg: JWSAlgorithm?)]) throws -> JSONWebKeySet {
        var jwks: [JSONValue] = []
        for entry in entries {
            let key = try SignatureFixtures.publicKey(entry.file, options: KeyLoadingOptions(allowsInsecureKeySizes: true))
            jwks.append(try #require(JSONWebKeySet.publicJWK(of: key, keyID: entry.kid, algorithm: entry.alg)))
        }
        return try JSONWebKeySet(bytes: JSONWebKeySet.document(of: jwks).encoded, source: "test.jwks")
    }

    /// A compact JWS with this header and payload text, signed (or not) as given.
    static func compact(header: String, payload: String, signature: [UInt8] = []) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(signature)
    }

    static func signed(header: String, payload: String, key: String) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try SignatureFixtures.signingKey(key).signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    // MARK: Decoding

    @Test func mintedStatementDecodesWithHeaderAndClaimsInOrder() throws {
        let key = try SignatureFixtures.signingKey("test-rsa2048.pem")
        let extra = [
            JSONMember(name: "zzz_custom", value: .array([.number("1.50"), .null])),
            JSONMember(name: "a_custom", value: .object([JSONMember(name: "b", value: .bool(true))])),
        ]
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(extra: extra), keyID: "k1", key: key)
        let statement = try SoftwareStatement(compact: Array(text.utf8))
        #expect(statement.header.members?.map(\.name) == ["alg", "typ", "kid"])
        #expect(statement.algorithmName == "RS256")
        #expect(statement.keyID == "k1")
        #expect(
            statement.claims.members?.map(\.name) == [
                "software_id", "software_version", "iss", "sub", "aud", "iat", "exp", "jti", "zzz_custom", "a_custom",
            ]
        )
        #expect(statement.softwareID == "4c1b1f5e-app")
        #expect(statement.softwareVersion == "3.2.1")
        #expect(statement.audience == ["https://api.example.test/register"])
        #expect(statement.expiresAt?.millisecondsSince1970 == Int64(Self.nowSeconds + 3600) * 1000)
        // A number keeps its text as written.
        #expect(statement.claims["zzz_custom"] == .array([.number("1.50"), .null]))
        #expect(statement.signature.count == 256)
        #expect(String(decoding: statement.signingInput, as: UTF8.self) == String(text.split(separator: ".").prefix(2).joined(separator: ".")))
    }

    @Test func audienceMayBeAnArray() throws {
        let text = Self.compact(header: #"{"alg":"RS256"}"#, payload: #"{"aud":["a","b"]}"#)
        #expect(try SoftwareStatement(compact: Array(text.utf8)).audience == ["a", "b"])
    }

    @Test(arguments: [
        (#"{"alg":"RS256"}"#, #"{"aud":5}"#, TokenError.Code.invalidFieldValue),
        (#"{"alg":"RS256"}"#, #"{"aud":["a",1]}"#, .invalidFieldValue),
        (#"{"alg":"RS256"}"#, #"{"exp":"tomorrow"}"#, .invalidFieldValue),
        (#"{"alg":"RS256"}"#, #"{"iat":1.7e9}"#, .invalidFieldValue),
        (#"{"alg":"RS256","crit":["exp"]}"#, #"{}"#, .invalidFieldValue),
        (#"{"alg":"RS256","b64":false}"#, #"{}"#, .invalidFieldValue),
        (#"{"typ":"JWT"}"#, #"{}"#, .missingField),
        (#"{"alg":"RS256"}"#, #"{"sub":"a","sub":"b"}"#, .ambiguousEnvelope),
        (#"{"alg":"RS256","alg":"none"}"#, #"{}"#, .ambiguousEnvelope),
        (#"{"alg":"RS256"}"#, #"{"n":01}"#, .invalidJSON),
        (#"{"alg":"RS256"}"#, #"["not","an","object"]"#, .invalidJSON),
        (#"{"alg":"RS256"}"#, "{\"s\":\"\u{1}\"}", .invalidJSON),
    ])
    func malformedStatementsAreTypedErrors(header: String, payload: String, code: TokenError.Code) {
        let text = Self.compact(header: header, payload: payload)
        #expect(throws: TokenError(code, stage: .model, "")) { try SoftwareStatement(compact: Array(text.utf8)) }
    }

    @Test func invalidUTF8InClaimsIsRefused() {
        let text =
            Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])
            + "."
        #expect(throws: TokenError(.invalidJSON, stage: .transport, "")) { try SoftwareStatement(compact: Array(text.utf8)) }
    }

    @Test(arguments: [
        "eyJhbGciOiJSUzI1NiJ9.e30",  // two parts
        "eyJhbGciOiJSUzI1NiJ9.e30..",  // four parts
        "eyJhbGciOiJSUzI1NiJ9=.e30.",  // padding
        "eyJhbGciOiJSUzI1NiJ9.e30.ab+c",  // standard alphabet
        "eyJhbGciOiJSUzI1NiJ9.e31.",  // non-canonical: unused bits set
        "eyJhbGciOiJSUzI1NiJ9. e30.",  // white space inside
    ])
    func notCanonicalCompactSerializationIsNotJWS(text: String) {
        #expect(throws: TokenError(.notJWS, stage: .transport, "")) { try SoftwareStatement(compact: Array(text.utf8)) }
    }

    @Test func jsonLimitsOfTheRESTReaderApply() {
        var limits = JSONDocumentLimits()
        limits.maxDepth = 4
        let deep = Self.compact(header: #"{"alg":"RS256"}"#, payload: #"{"a":{"b":{"c":{"d":{}}}}}"#)
        #expect(throws: TokenError(.jsonTooDeep, stage: .transport, "")) { try SoftwareStatement(compact: Array(deep.utf8), limits: limits) }
        limits = JSONDocumentLimits()
        limits.maxValues = 5
        let many = Self.compact(header: #"{"alg":"RS256"}"#, payload: #"{"a":[1,2,3,4,5,6]}"#)
        #expect(throws: TokenError(.jsonLimitExceeded, stage: .transport, "")) { try SoftwareStatement(compact: Array(many.utf8), limits: limits) }
    }

    @Test func jsonValueReEncodesToAnEqualValue() throws {
        let text = #"{"b":"\u00e9\n\"","a":[1,-0.5e+3,true,false,null,{}],"c":"\ud83d\ude00"}"#
        let value = try JSONValue.readObject(Array(text.utf8))
        #expect(try JSONValue.readObject(value.encoded) == value)
        #expect(value.members?.map(\.name) == ["b", "a", "c"])
    }

    // MARK: Verification

    @Test(arguments: ["test-rsa2048", "test-p256", "test-ed25519"])
    func mintedStatementsVerifyWithTheirPublicKey(name: String) throws {
        let key = try SignatureFixtures.signingKey("\(name).pem")
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), keyID: "k1", key: key)
        let verdict = Self.verifier([try Self.ringKey("\(name).pub.pem")]).verify(compact: Array(text.utf8))
        #expect(verdict.status == .validToken, "\(verdict.reason)")
        #expect(verdict.verified?.statement.claims == verdict.statement?.claims)
        #expect(verdict.checks == [.format, .signature, .expiry, .issueTime])
        let statement = try #require(verdict.statement)
        if name == "test-p256" { #expect(statement.signature.count == 64 && statement.algorithmName == "ES256") }
        if name == "test-ed25519" { #expect(statement.algorithmName == "EdDSA") }
    }

    @Test func pss256VerifiesWithAnRSAKey() throws {
        let signer = try SignatureFixtures.signingKey("test-rsa2048.pem", options: KeyLoadingOptions(treatsRSAKeysAsPSS: true))
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), key: signer)
        #expect(text.hasPrefix(Base64URL.encode(Array(#"{"alg":"PS256""#.utf8)).dropLast(2)))
        let verdict = Self.verifier([try Self.ringKey("test-rsa2048.pub.pem")]).verify(compact: Array(text.utf8))
        #expect(verdict.status == .validToken, "\(verdict.reason)")
    }

    @Test func anotherKeyOrATamperedClaimIsAnInvalidSignature() throws {
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), key: SignatureFixtures.signingKey("test-rsa2048.pem"))
        let other = Self.verifier([try Self.ringKey("test-rsa2048-b.pub.pem")]).verify(compact: Array(text.utf8))
        #expect(other.status == .invalidSignature)
        #expect(other.verified == nil)

        var parts = text.split(separator: ".").map(String.init)
        var claims = try JSONValue.readObject(Base64URL.decode(Array(parts[1].utf8))!)
        if case .object(var members) = claims {
            members[0].value = .string("someone-else")
            claims = .object(members)
        }
        parts[1] = Base64URL.encode(claims.encoded)
        let tampered = Self.verifier([try Self.ringKey("test-rsa2048.pub.pem")]).verify(compact: Array(parts.joined(separator: ".").utf8))
        #expect(tampered.status == .invalidSignature)
    }

    @Test func algNoneAndHMACAreRefusedByName() throws {
        let keys = [try Self.ringKey("test-rsa2048.pub.pem")]
        let none = Self.verifier(keys).verify(compact: Array(Self.compact(header: #"{"alg":"none"}"#, payload: #"{"sub":"x"}"#).utf8))
        #expect(none.status == .invalidSignature)
        #expect(none.reason.contains("'none' is refused"))
        // HS256 keyed with the RSA public key's PEM: the classic confusion.
        let hmac = Self.verifier(keys).verify(
            compact: Array(
                Self.compact(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"x"}"#, signature: [UInt8](repeating: 7, count: 32)).utf8
            )
        )
        #expect(hmac.status == .invalidSignature)
        #expect(hmac.reason.contains("HMAC"))
        let unknown = Self.verifier(keys).verify(compact: Array(Self.compact(header: #"{"alg":"RS1"}"#, payload: "{}").utf8))
        #expect(unknown.status == .invalidSignature)
        #expect(unknown.reason.contains("not allowed"))
    }

    @Test func algorithmMustFitTheKey() throws {
        // An RS256 statement against an EC key: names both.
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), key: SignatureFixtures.signingKey("test-rsa2048.pem"))
        let verdict = Self.verifier([try Self.ringKey("test-p256.pub.pem")]).verify(compact: Array(text.utf8))
        #expect(verdict.status == .invalidSignature)
        #expect(verdict.reason.contains("RS256 needs an RSA key") && verdict.reason.contains("EC P-256"))
        // An RSA-PSS key verifies only PS*.
        let pss = Self.verifier([try Self.ringKey("test-rsapss2048.pub.pem")]).verify(compact: Array(text.utf8))
        #expect(pss.status == .invalidSignature)
        #expect(pss.reason.contains("RSA-PSS key"))
    }

    @Test func ecdsaSignatureMustBeRawNotDER() throws {
        let header = #"{"alg":"ES256"}"#
        let payload = #"{"sub":"x"}"#
        let der = try Self.signed(header: header, payload: payload, key: "test-p256.pem")  // OpenSSL's DER form
        let verdict = Self.verifier([try Self.ringKey("test-p256.pub.pem")]).verify(compact: Array(der.utf8))
        #expect(verdict.status == .invalidSignature)
    }

    @Test func headerKeysNeverSupplyAKey() throws {
        // Signed by an untrusted key that the header offers as `jwk`.
        let attacker = try SignatureFixtures.publicKey("test-rsa2048-b.pub.pem")
        let jwk = try #require(JSONWebKeySet.publicJWK(of: attacker))
        let header = String(
            decoding: JSONValue.object([JSONMember(name: "alg", value: .string("RS256")), JSONMember(name: "jwk", value: jwk)]).encoded,
            as: UTF8.self
        )
        let text = try Self.signed(header: header, payload: #"{"sub":"x"}"#, key: "test-rsa2048-b.pem")
        let verdict = Self.verifier([try Self.ringKey("test-rsa2048.pub.pem")]).verify(compact: Array(text.utf8))
        #expect(verdict.status == .invalidSignature)
        #expect(verdict.reason.contains("'jwk' never supplies a key"))
        // And with no trusted key at all, nothing verifies.
        #expect(Self.verifier([]).verify(compact: Array(text.utf8)).status == .invalidSignature)
    }

    @Test func kidSelectsTheJWKSKey() throws {
        let set = try Self.keySet([("test-rsa2048.pub.pem", "first", nil), ("test-rsa2048-b.pub.pem", "second", .rs256)])
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), keyID: "second", key: SignatureFixtures.signingKey("test-rsa2048-b.pem"))
        let verdict = Self.verifier(set.keys).verify(compact: Array(text.utf8))
        #expect(verdict.status == .validToken, "\(verdict.reason)")
        #expect(verdict.key?.keyID == "second")
        // A kid no key has, with only JWKS keys: "no key with kid".
        let unknown = try SoftwareStatementMinter.mint(claims: Self.claims(), keyID: "third", key: SignatureFixtures.signingKey("test-rsa2048-b.pem"))
        let missing = Self.verifier(set.keys).verify(compact: Array(unknown.utf8))
        #expect(missing.status == .invalidSignature)
        #expect(missing.reason.contains("no key with kid 'third'"))
        // The same kid with a ring key (no kid) beside: the ring key is tried.
        let withRing = Self.verifier(set.keys + [try Self.ringKey("test-rsa2048-b.pub.pem")]).verify(compact: Array(unknown.utf8))
        #expect(withRing.status == .validToken)
        #expect(withRing.key?.keyID == nil)
        // The kid selects: the statement signed by 'first' but naming 'second' fails.
        let misnamed = try SoftwareStatementMinter.mint(claims: Self.claims(), keyID: "second", key: SignatureFixtures.signingKey("test-rsa2048.pem"))
        #expect(Self.verifier(set.keys).verify(compact: Array(misnamed.utf8)).status == .invalidSignature)
    }

    @Test func aJWKAlgMustEqualTheStatementsAlg() throws {
        let set = try Self.keySet([("test-rsa2048.pub.pem", "k", .ps256)])
        let text = try SoftwareStatementMinter.mint(claims: Self.claims(), keyID: "k", key: SignatureFixtures.signingKey("test-rsa2048.pem"))
        let verdict = Self.verifier(set.keys).verify(compact: Array(text.utf8))
        #expect(verdict.status == .invalidSignature)
        #expect(verdict.reason.contains("says alg PS256"))
    }

    @Test func es384VerifiesWithAP384JWK() throws {
        // P-384 is accepted for statements only: the ring refuses it for tokens.
        let pem = String(decoding: try SignatureFixtures.bytes("test-p384.pub.pem"), as: UTF8.self)
        #expect(throws: KeyError.self) { try PublicKey.keys(from: Array(pem.utf8), source: "p384") }
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        let point = Array(der.suffix(96))  // SPKI ends with the BIT STRING 04 || x || y
        let jwk =
            #"{"keys":[{"kty":"EC","crv":"P-384","kid":"p384","x":"\#(Base64URL.encode(point[0..<48]))","y":"\#(Base64URL.encode(point[48...]))"}]}"#
        let set = try JSONWebKeySet(bytes: Array(jwk.utf8), source: "p384.jwks")

        // Signed by the openssl command line (DER), re-encoded raw as JWS wants.
        let input = Base64URL.encode(Array(#"{"alg":"ES384","kid":"p384"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"x"}"#.utf8))
        let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("es384-\(UUID().uuidString)")
        try Data(input.utf8).write(to: inputFile)
        defer { try? FileManager.default.removeItem(at: inputFile) }
        let signing = try SignatureFixtures.openssl(["dgst", "-sha384", "-sign", SignatureFixtures.path("test-p384.pem"), inputFile.path])
        try #require(signing.status == 0, "\(signing.errorText)")
        let derSignature = signing.output
        let raw = try #require(ECDSASignatureEncoding.raw(fromDER: derSignature, width: 48))
        let text = input + "." + Base64URL.encode(raw)
        let verdict = Self.verifier(set.keys).verify(compact: Array(text.utf8))
        #expect(verdict.status == .validToken, "\(verdict.reason)")
        // ES256 named over the same P-384 key does not fit it.
        let es256 =
            Base64URL.encode(Array(#"{"alg":"ES256","kid":"p384"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"x"}"#.utf8)) + "."
            + Base64URL.encode(raw)
        #expect(Self.verifier(set.keys).verify(compact: Array(es256.utf8)).reason.contains("ES256 needs an EC P-256 key"))

        // The same key as a PEM file: read for statements by JWSVerificationKey.load (docs/DESIGN.md#software-statements),
        // refused by the tokens' ring.
        let pemPath = SignatureFixtures.path("test-p384.pub.pem")
        #expect(throws: KeyError.self) { try KeyRing.load(paths: [pemPath]) }
        let fromPEM = try JWSVerificationKey.load(paths: [pemPath])
        #expect(fromPEM.keys.map(\.sha256Fingerprint) == set.keys.map(\.sha256Fingerprint))
        #expect(Self.verifier(fromPEM.keys).verify(compact: Array(text.utf8)).status == .validToken)

        // A point of zeros is off the curve: refused at load.
        let zeros =
            #"{"keys":[{"kty":"EC","crv":"P-384","x":"\#(Base64URL.encode([UInt8](repeating: 0, count: 48)))","y":"\#(Base64URL.encode([UInt8](repeating: 0, count: 48)))"}]}"#
        #expect(throws: KeyError.self) { try JSONWebKeySet(bytes: Array(zeros.utf8), source: "zeros.jwks") }
    }

    @Test func expiryAndNotBefore() throws {
        let key = try SignatureFixtures.signingKey("test-rsa2048.pem")
        let keys = [try Self.ringKey("test-rsa2048.pub.pem")]
        func status(exp: Int?, iat: Int?, extra: [JSONMember] = [], leeway: Int64 = 30_000) throws -> SoftwareStatementVerdict {
            let text = try SoftwareStatementMinter.mint(claims: Self.claims(exp: exp, iat: iat, extra: extra), key: key)
            return Self.verifier(keys, leeway: leeway).verify(compact: Array(text.utf8))
        }
        #expect(try status(exp: Self.nowSeconds - 31, iat: nil).status == .tokenExpired)
        #expect(try status(exp: Self.nowSeconds - 29, iat: nil).status == .validToken)
        #expect(try status(exp: Self.nowSeconds - 1, iat: nil, leeway: 0).status == .tokenExpired)
        #expect(try status(exp: nil, iat: Self.nowSeconds + 31).status == .tokenNotYetValid)
        #expect(try status(exp: nil, iat: Self.nowSeconds + 29).status == .validToken)
        let nbf = try status(exp: nil, iat: nil, extra: [JSONMember(name: "nbf", value: .number(String(Self.nowSeconds + 600)))])
        #expect(nbf.status == .tokenNotYetValid)
        #expect(nbf.reason.contains("'nbf'"))
        let noExpiry = try status(exp: nil, iat: nil)
        #expect(noExpiry.status == .validToken)
        #expect(noExpiry.skipped.map(\.check) == [.expiry, .issueTime])
        #expect(noExpiry.checks == [.format, .signature])
    }

    // MARK: JWKS files

    @Test(arguments: [
        (#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}]}"#, "private member 'd'"),
        (#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#, "private member 'k'"),
        (#"{"keys":[{"kty":"oct"}]}"#, "HMAC secret"),
        (#"{"keys":[{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}]}"#, "P-521"),
        (#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","use":"enc"}]}"#, "not for signatures"),
        (#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","alg":"HS256"}]}"#, "HMAC"),
        (#"{"keys":[]}"#, "has no keys"),
        (#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},]}"#, "trailing comma"),
        (#"{"keys":[{"kty":"RSA","kty":"EC"}]}"#, "appears twice"),
    ])
    func badJWKSFilesAreRefusedWithTheReason(text: String, reason: String) {
        do {
            _ = try JSONWebKeySet(bytes: Array(text.utf8), source: "test.jwks")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains(reason), "\(error.description)")
            #expect(error.description.contains("test.jwks"))
        }
    }

    @Test func degenerateJWKSKeysAreRefusedLikePEMKeys() throws {
        // e = 1: every padded digest is its own "signature".
        let modulus = try #require(JSONWebKeySet.publicJWK(of: SignatureFixtures.publicKey("test-rsa2048.pub.pem"))?["n"]?.stringValue)
        let text = #"{"keys":[{"kty":"RSA","kid":"weak","n":"\#(modulus)","e":"AQ"}]}"#
        #expect(throws: KeyError.self) { try JSONWebKeySet(bytes: Array(text.utf8), source: "weak.jwks") }
        do {
            _ = try JSONWebKeySet(bytes: Array(text.utf8), source: "weak.jwks")
        } catch {
            #expect(error.code == .degenerateKey)
        }
        // RSA-1024 needs the same opt-in as a PEM key.
        let small = try #require(
            JSONWebKeySet.publicJWK(of: SignatureFixtures.publicKey("test-rsa1024.pub.pem", options: .init(allowsInsecureKeySizes: true)))
        )
        let smallSet = JSONWebKeySet.document(of: [small]).encoded
        #expect(throws: KeyError.self) { try JSONWebKeySet(bytes: smallSet, source: "small.jwks") }
        #expect(try JSONWebKeySet(bytes: smallSet, source: "small.jwks", options: .init(allowsInsecureKeySizes: true)).keys.count == 1)
    }

    @Test(arguments: ["test-rsa2048.pub.pem", "test-p256.pub.pem", "test-ed25519.pub.pem"])
    func aJWKMadeFromAKeyIsTheSameKey(name: String) throws {
        let key = try SignatureFixtures.publicKey(name)
        let set = try JSONWebKeySet(
            bytes: JSONWebKeySet.document(of: [try #require(JSONWebKeySet.publicJWK(of: key, keyID: "x"))]).encoded,
            source: "x.jwks"
        )
        #expect(set.keys.first?.sha256Fingerprint == key.sha256Fingerprint)
    }
}
