import EntitlementTokens
import Testing

@testable import CDNTokens

/// Every COSE refusal, typed: structure, algorithm confusion, keys, lengths.
@Suite("COSE messages: refusals")
struct COSEHostileInputTests {
    static let claims: CBORValue = .map([CBORMapEntry(.integer(1), .text("tnt")), CBORMapEntry(.integer(4), .integer(2_000_000_000))])
    static let facts = CDNRequestFacts(now: 1_768_478_400)

    /// A COSE message built by hand: `protected` written as given, tag computed with `macKey` when set.
    static func message(
        tag: UInt64? = 17,
        cwt: Bool = false,
        protected: CBORValue? = .map([CBORMapEntry(.integer(1), .integer(5))]),
        unprotected: [CBORMapEntry] = [CBORMapEntry(.integer(4), .bytes(Array("edge-1".utf8)))],
        payload: CBORValue = .bytes(claims.cbor()),
        macKey: CATKey? = nil,
        authenticationTag: [UInt8]? = nil
    ) throws -> [UInt8] {
        let protectedBytes = protected.map { $0.cbor() } ?? []
        var tagBytes = authenticationTag ?? [UInt8](repeating: 0, count: 32)
        if let macKey, case .bytes(let payloadBytes) = payload, case .hmac(let secret) = macKey.material {
            let structure = CBORValue.array([.text("MAC0"), .bytes(protectedBytes), .bytes([]), .bytes(payloadBytes)]).cbor()
            tagBytes = ForeignDigest.sha256.hmac(key: secret, message: structure)!
        }
        var value: CBORValue = .array([.bytes(protectedBytes), .map(unprotected), payload, .bytes(tagBytes)])
        if let tag { value = .tagged(tag, value) }
        if cwt { value = .tagged(61, value) }
        return value.cbor()
    }

    func readStatus(_ bytes: [UInt8]) -> CDNStatus {
        CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(cbor: bytes) }
    }

    func verifyRefusal(_ bytes: [UInt8], keys: [CATKey]) throws -> CDNRefusal? {
        let token = try UnverifiedCommonAccessToken(cbor: bytes)
        return CATFixtures.refusal { () throws(CDNRefusal) in _ = try token.verify(keys: keys, facts: Self.facts) }
    }

    @Test("a well-made Mac0 verifies, tagged, untagged and inside tag 61")
    func wellMade() throws {
        let key = try CATFixtures.hmacKey()
        for (tag, cwt) in [(UInt64(17), false), (17, true), (nil, false), (nil, true)] as [(UInt64?, Bool)] {
            #expect(try verifyRefusal(Self.message(tag: tag, cwt: cwt, macKey: key), keys: [key]) == nil)
        }
    }

    @Test("alg only in the unprotected header is refused (INVALID_SIGNATURE), whatever the MAC")
    func algorithmUnprotected() throws {
        let key = try CATFixtures.hmacKey()
        let bytes = try Self.message(
            protected: nil,
            unprotected: [CBORMapEntry(.integer(1), .integer(5)), CBORMapEntry(.integer(4), .bytes(Array("edge-1".utf8)))],
            macKey: key
        )
        let refusal = try verifyRefusal(bytes, keys: [key])
        #expect(refusal?.status == .invalidSignature)
        #expect(refusal?.reason.contains("only in the unprotected header") == true)
        // Untagged, nothing protected says what it is: refused at reading.
        #expect(readStatus(try Self.message(tag: nil, protected: nil, unprotected: [CBORMapEntry(.integer(1), .integer(5))])) == .invalidTokenFormat)
    }

    @Test("an alg that does not fit the key or the structure is refused (no algorithm confusion)")
    func algorithmConfusion() throws {
        let hmac = try CATFixtures.hmacKey()
        let es256 = try CATFixtures.es256Key(id: "edge-1")
        // ES256 named in a Mac0: refused whatever the key.
        let esInMac = try Self.message(protected: .map([CBORMapEntry(.integer(1), .integer(-7))]), macKey: hmac)
        #expect(try verifyRefusal(esInMac, keys: [hmac])?.reason.contains("alg ES256 in a COSE_Mac0") == true)
        // A Mac0 for an ES256 key only: the key decides.
        let refusal = try verifyRefusal(try Self.message(macKey: hmac), keys: [es256])
        #expect(refusal?.status == .invalidSignature)
        #expect(refusal?.reason.contains("does not fit") == true)
        // HMAC 256/64 (alg 4) and unknown algorithms.
        for alg in [CBORValue.integer(4), .integer(-8), .text("HS256"), .integer(0)] {
            let bytes = try Self.message(protected: .map([CBORMapEntry(.integer(1), alg)]), macKey: hmac)
            #expect(try verifyRefusal(bytes, keys: [hmac])?.status == .invalidSignature)
        }
        // No alg at all.
        #expect(try verifyRefusal(try Self.message(protected: .map([])), keys: [hmac])?.status == .invalidSignature)
    }

    @Test("a truncated or extended MAC or signature is refused before any comparison")
    func tagLengths() throws {
        let key = try CATFixtures.hmacKey()
        let good = try UnverifiedCommonAccessToken(cbor: Self.message(macKey: key)).message
        for length in [0, 16, 31, 33, 64] {
            let tag = Array((good.authenticationTag + good.authenticationTag + good.authenticationTag).prefix(length))
            let refusal = try verifyRefusal(try Self.message(authenticationTag: tag), keys: [key])
            #expect(refusal?.status == .invalidSignature)
            #expect(refusal?.reason.contains("\(length)-byte MAC") == true)
        }
        let es = try CATFixtures.es256Key(id: "edge-1")
        let sign1 = try CommonAccessTokenIssuer.message(
            CDNIssueParameters(url: CATFixtures.url("https://a.example/x/y.ts"), scope: .folder, now: 1_768_478_400, lifetime: 60),
            issuer: "i",
            key: es,
            cti: [1]
        )
        let truncated = sign1.with(authenticationTag: Array(sign1.authenticationTag.prefix(63))).cbor()
        #expect(try verifyRefusal(truncated, keys: [es])?.reason.contains("63-byte signature") == true)
    }

    @Test("a wrong MAC, a tampered payload or header, and an unknown kid are INVALID_SIGNATURE")
    func tampering() throws {
        let key = try CATFixtures.hmacKey()
        var bytes = try Self.message(macKey: key)
        bytes[bytes.count - 1] ^= 1
        #expect(try verifyRefusal(bytes, keys: [key])?.status == .invalidSignature)
        let other = try CATKey(hmacHex: String(repeating: "ab", count: 32), id: "edge-1")
        #expect(try verifyRefusal(try Self.message(macKey: key), keys: [other])?.status == .invalidSignature)
        let unknownKid = try Self.message(unprotected: [CBORMapEntry(.integer(4), .bytes(Array("nobody".utf8)))], macKey: key)
        #expect(try verifyRefusal(unknownKid, keys: [key])?.reason == "no key with kid \"nobody\"")
        // A key without an id is tried when no key has the kid.
        #expect(try verifyRefusal(unknownKid, keys: [try CATFixtures.hmacKey(id: nil)]) == nil)
        #expect(try verifyRefusal(unknownKid, keys: [])?.status == .invalidSignature)
    }

    @Test("a kid selects its key among several; rotation")
    func keySelection() throws {
        let signing = try CATFixtures.hmacKey(id: "new")
        let old = try CATKey(hmacHex: String(repeating: "cd", count: 32), id: "old")
        let bytes = try Self.message(unprotected: [CBORMapEntry(.integer(4), .bytes(Array("new".utf8)))], macKey: signing)
        let token = try UnverifiedCommonAccessToken(cbor: bytes)
        #expect(try token.verify(keys: [old, signing], facts: Self.facts).keyID == "new")
    }

    @Test(
        "structural refusals are INVALID_TOKEN_FORMAT",
        arguments: [
            "the array has 3 items", "the protected header is a map, not bytes", "the payload is text", "the tag is text",
            "tag 16 (COSE_Encrypt0)", "a label in both headers", "a kid that is text", "a header label that is bytes",
            "the protected header holds trailing bytes", "untagged with an unknown alg",
        ]
    )
    func structure(_ name: String) throws {
        let alg = CBORMapEntry(.integer(1), .integer(5))
        let bytes: [UInt8]
        switch name {
        case "the array has 3 items": bytes = CBORValue.tagged(17, .array([.bytes([0xA0]), .map([]), .bytes([0xA0])])).cbor()
        case "the protected header is a map, not bytes":
            bytes = CBORValue.tagged(17, .array([.map([alg]), .map([]), .bytes([0xA0]), .bytes([])])).cbor()
        case "the payload is text": bytes = try Self.message(payload: .text("a0"))
        case "the tag is text": bytes = CBORValue.tagged(17, .array([.bytes([0xA1, 1, 5]), .map([]), .bytes([0xA0]), .text("x")])).cbor()
        case "tag 16 (COSE_Encrypt0)": bytes = try Self.message(tag: 16)
        case "a label in both headers": bytes = try Self.message(unprotected: [alg])
        case "a kid that is text": bytes = try Self.message(unprotected: [CBORMapEntry(.integer(4), .text("edge-1"))])
        case "a header label that is bytes": bytes = try Self.message(unprotected: [CBORMapEntry(.bytes([1]), .integer(1))])
        case "the protected header holds trailing bytes":
            bytes = CBORValue.tagged(17, .array([.bytes([0xA1, 1, 5, 0]), .map([]), .bytes([0xA0]), .bytes([])])).cbor()
        default: bytes = try Self.message(tag: nil, protected: .map([CBORMapEntry(.integer(1), .integer(4))]))
        }
        #expect(readStatus(bytes) == .invalidTokenFormat, "\(name)")
    }

    @Test("a crit header is refused")
    func critical() throws {
        let key = try CATFixtures.hmacKey()
        let bytes = try Self.message(
            protected: .map([CBORMapEntry(.integer(1), .integer(5)), CBORMapEntry(.integer(2), .array([.integer(99)]))]),
            macKey: key
        )
        #expect(try verifyRefusal(bytes, keys: [key])?.status == .invalidTokenFormat)
    }

    @Test(
        "the claims must be a CBOR map of well-typed claims",
        arguments: [
            ("payload is an array", CBORValue.array([])),
            ("exp is a float", .map([CBORMapEntry(.integer(4), .float(bits: 0x41D6_95B4_3D00_0000, byteCount: 8))])),
            ("iss is bytes", .map([CBORMapEntry(.integer(1), .bytes([1]))])), ("cti is text", .map([CBORMapEntry(.integer(7), .text("x"))])),
            ("catreplay 3", .map([CBORMapEntry(.integer(308), .integer(3))])), ("catu is a list", .map([CBORMapEntry(.integer(312), .array([]))])),
            ("catm holds a number", .map([CBORMapEntry(.integer(313), .array([.integer(1)]))])),
            ("catnip holds text", .map([CBORMapEntry(.integer(311), .array([.text("192.0.2.1")]))])),
            ("aud is a number", .map([CBORMapEntry(.integer(3), .integer(3))])),
        ]
    )
    func claimTypes(_ name: String, _ claims: CBORValue) throws {
        #expect(readStatus(try Self.message(payload: .bytes(claims.cbor()))) == .invalidTokenFormat, "\(name)")
    }

    @Test("a token of more than 8 KiB is refused, as bytes and as text")
    func oversized() throws {
        let big = CBORValue.map([CBORMapEntry(.integer(1), .text(String(repeating: "a", count: 8200)))])
        #expect(readStatus(try Self.message(payload: .bytes(big.cbor()))) == .invalidTokenFormat)
        let text = String(repeating: "A", count: CATTextEncoding.maximumTextLength + 1)
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(text: text) } == .invalidTokenFormat)
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(text: "not base64!") } == .invalidTokenFormat)
        #expect(CATFixtures.status { () throws(CDNRefusal) in _ = try UnverifiedCommonAccessToken(text: "  ") } == .invalidTokenFormat)
    }
}
