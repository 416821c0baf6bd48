import Testing

@testable import EntitlementTokens

/// The SHA-256 and HMAC-SHA-256 the gate keys its cache, sessions and CAT
/// identities with (docs/DESIGN.md#one-crypto-library), against the published
/// vectors: FIPS 180-2's examples and RFC 4231's test cases.
@Suite struct GateDigestTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 where character != UInt8(ascii: " ") {
            let nibble = character <= UInt8(ascii: "9") ? character - UInt8(ascii: "0") : (character | 0x20) - UInt8(ascii: "a") + 10
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    @Test(arguments: [
        ("", "e3b0c442 98fc1c14 9afbf4c8 996fb924 27ae41e4 649b934c a495991b 7852b855"),
        ("abc", "ba7816bf 8f01cfea 414140de 5dae2223 b00361a3 96177a9c b410ff61 f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61 d20638b8 e5c02693 0c3e6039 a33ce459 64ff2167 f6ecedd4 19db06c1"
        ),
    ])
    func sha256MatchesFIPS180(message: String, digest: String) {
        #expect(SHA256Hasher.hash(message.utf8).bytes == Self.hex(digest))
        // Piece by piece, from a collection that is not contiguous.
        var hasher = SHA256Hasher()
        for character in message.utf8 { hasher.update(CollectionOfOne(character)) }
        #expect(hasher.finalize().bytes == Self.hex(digest))
    }

    /// A digest read back from its 32 bytes is the same digest, written out
    /// the same; any other count is no digest.
    @Test func aDigestRoundTripsThroughItsBytesAndOtherCountsAreRefused() throws {
        let digest = SHA256Hasher.hash("abc".utf8)
        let bytes = digest.bytes
        #expect(try #require(SHA256Digest(bytes)) == digest)
        #expect(try #require(SHA256Digest(bytes[...])).bytes == Self.hex("ba7816bf 8f01cfea 414140de 5dae2223 b00361a3 96177a9c b410ff61 f20015ad"))
        var appended: [UInt8] = [7]
        digest.append(to: &appended)
        #expect(appended == [7] + bytes)
        #expect(SHA256Digest(bytes.dropLast()) == nil)
        #expect(SHA256Digest(bytes + [0]) == nil)
        #expect(SHA256Digest([UInt8]()) == nil)
        #expect(SHA256Digest().bytes == [UInt8](repeating: 0, count: 32))
    }

    @Test func aMillionAsInPieces() {
        var hasher = SHA256Hasher()
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(piece[...]) }
        #expect(hasher.finalize().bytes == Self.hex("cdc76e5c 9914fb92 81a1c7e2 84d73e67 f1809a48 a497200e 046d39cc c7112cd0"))
    }

    @Test func aValuesBytesAreHashedAsTheyLie() {
        var hasher = SHA256Hasher()
        hasher.update(valueBytesOf: UInt64(0x6162_6364).bigEndian)
        #expect(hasher.finalize() == SHA256Hasher.hash([0, 0, 0, 0, 0x61, 0x62, 0x63, 0x64]))
        #expect(SHA256Hasher.hash("a".utf8) != SHA256Hasher.hash("b".utf8))
    }

    /// RFC 4231 §4.2–4.8, without case 5 (a truncated code).
    @Test(arguments: [
        (
            String(repeating: "0b", count: 20), "4869205468657265",
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (
            String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            String(repeating: "aa", count: 131),
            "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
    ])
    func hmacMatchesRFC4231(key: String, message: String, code: String) {
        let key = HMACSHA256Key(Self.hex(key))
        #expect(key.authenticationCode(for: Self.hex(message)).bytes == Self.hex(code))
        #expect(key.isValid(Self.hex(code), for: Self.hex(message)))
    }

    @Test func aCodeOffByOneBitOrOneByteIsRefused() {
        let key = HMACSHA256Key(Array("a secret of thirty-two bytes....".utf8))
        let message = Array("the signed part".utf8)
        let code = key.authenticationCode(for: message).bytes
        for index in code.indices {
            var altered = code
            altered[index] ^= 0x01
            #expect(!key.isValid(altered, for: message))
        }
        #expect(!key.isValid(code.dropLast(), for: message))
        #expect(!key.isValid(code + [0], for: message))
        #expect(!key.isValid([UInt8](), for: message))
        #expect(key.isValid(code[...], for: message[...]))
        // The keyed state is copied for every code, never consumed.
        #expect(key.authenticationCode(for: message).bytes == code)
        #expect(ForeignDigest.sha256.hmac(key: Array("a secret of thirty-two bytes....".utf8), message: message) == code)
    }

    /// One key serves every thread: its keyed state is only read.
    @Test func oneKeyServesManyTasksAtOnce() async {
        let key = HMACSHA256Key(Array(repeating: 7, count: 32))
        let expected = (0..<64).map { ForeignDigest.sha256.hmac(key: Array(repeating: 7, count: 32), message: [UInt8($0)])! }
        let agreed = await withTaskGroup(of: Bool.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    (0..<2000).allSatisfy { round in
                        let index = (round + worker) % 64
                        return key.authenticationCode(for: [UInt8(index)]).bytes == expected[index]
                    }
                }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(agreed)
    }
}
