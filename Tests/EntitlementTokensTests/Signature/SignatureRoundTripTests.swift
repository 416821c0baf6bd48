import Foundation
import Testing

@testable import EntitlementTokens

/// Sign/verify round trips and everything that must *not* verify.
@Suite("Signature: sign and verify")
struct SignatureRoundTripTests {
    typealias F = SignatureFixtures

    /// (private key, public key file, algorithm, signature length or nil when it varies)
    static let pairs: [(String, String, SignatureAlgorithm, Int?)] = [
        ("test-rsa2048.pem", "test-rsa2048.pub.pem", .rsaPKCS1SHA256, 256),
        ("test-rsa3072.pem", "test-rsa3072.pub.pem", .rsaPKCS1SHA256, 384),
        ("test-rsapss2048.pem", "test-rsapss2048.pub.pem", .rsaPSSSHA256, 256),
        ("test-rsapss2048-restricted.pem", "test-rsapss2048-restricted.pub.pem", .rsaPSSSHA256, 256),
        ("test-p256.pem", "test-p256.pub.pem", .ecdsaP256SHA256, nil),
        ("test-ed25519.pem", "test-ed25519.pub.pem", .ed25519, 64),
    ]

    @Test("Round trip", arguments: pairs)
    func roundTrip(privateName: String, publicName: String, algorithm: SignatureAlgorithm, length: Int?) throws {
        let signer = try F.signingKey(privateName)
        let verifier = try F.publicKey(publicName)
        #expect(signer.algorithm == algorithm)
        #expect(verifier.algorithm == algorithm)
        for message in [F.tokenMessage, [], Array("x".utf8)] {
            let signature = try signer.signature(for: message)
            if let length { #expect(signature.count == length) }
            let verifies = verifier.isValidSignature(signature, for: message)
            #expect(verifies)
            let signersKeyVerifies = signer.publicKey.isValidSignature(signature, for: message)
            #expect(signersKeyVerifies)
            let verifiesSpan = verifier.isValidSignature(signature, for: message.span)
            #expect(verifiesSpan)
            let verifiesSpans = verifier.isValidSignature(signature.span, for: message.span)
            #expect(verifiesSpans)
            // A message that is a slice of a larger buffer (a token's signed bytes).
            let framed = [0x3C] + message + [0x3E]
            let verifiesSlice = verifier.isValidSignature(signature, for: framed[1..<(framed.count - 1)].span)
            #expect(verifiesSlice)
        }
    }

    /// Changing any single byte of the signed bytes breaks the signature, and
    /// a failed verify leaves the pooled context fit for the next one.
    @Test("Flipping any message byte fails", arguments: pairs)
    func everyMessageByteMatters(privateName: String, publicName: String, algorithm: SignatureAlgorithm, length: Int?) throws {
        let signer = try F.signingKey(privateName)
        let verifier = try F.publicKey(publicName)
        let message = Array("<authToken><ttl>420000</ttl></authToken>".utf8)
        let signature = try signer.signature(for: message)
        for index in message.indices {
            var tampered = message
            tampered[index] ^= 0x01
            let verifiesTampered = verifier.isValidSignature(signature, for: tampered)
            #expect(!verifiesTampered, "byte \(index)")
        }
        let verifiesShortened = verifier.isValidSignature(signature, for: Array(message.dropLast()))
        #expect(!verifiesShortened)
        let verifiesExtended = verifier.isValidSignature(signature, for: message + [0x20])
        #expect(!verifiesExtended)
        let verifiesPrefixed = verifier.isValidSignature(signature, for: [0x20] + message)
        #expect(!verifiesPrefixed)
        let stillVerifies = verifier.isValidSignature(signature, for: message)
        #expect(stillVerifies)
    }

    @Test("Flipping any signature byte fails", arguments: pairs)
    func everySignatureByteMatters(privateName: String, publicName: String, algorithm: SignatureAlgorithm, length: Int?) throws {
        let signer = try F.signingKey(privateName)
        let verifier = try F.publicKey(publicName)
        let signature = try signer.signature(for: F.tokenMessage)
        for index in signature.indices {
            var tampered = signature
            tampered[index] ^= 0x80
            let verifiesTampered = verifier.isValidSignature(tampered, for: F.tokenMessage)
            #expect(!verifiesTampered, "byte \(index)")
        }
        let stillVerifies = verifier.isValidSignature(signature, for: F.tokenMessage)
        #expect(stillVerifies)
    }

    @Test("Malformed signatures are false, never a crash", arguments: pairs)
    func malformedSignatures(privateName: String, publicName: String, algorithm: SignatureAlgorithm, length: Int?) throws {
        let signer = try F.signingKey(privateName)
        let verifier = try F.publicKey(publicName)
        let message = F.tokenMessage
        let signature = try signer.signature(for: message)
        let candidates: [[UInt8]] = [
            [],  // missing
            [0],
            Array(signature.dropLast()),  // truncated
            Array(signature.dropFirst()),
            Array(signature.prefix(signature.count / 2)),
            signature + [0],  // extended
            [0] + signature,
            [UInt8](repeating: 0, count: signature.count),  // right length, all zero
            [UInt8](repeating: 0xff, count: signature.count),
            (0..<signature.count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) },
            [UInt8](repeating: 0x30, count: 64),  // DER-looking raw length
            [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00],  // ECDSA r = s = 0
            [UInt8](repeating: 0x41, count: 4096),
        ]
        for candidate in candidates {
            let verifiesMalformed = verifier.isValidSignature(candidate, for: message)
            #expect(!verifiesMalformed, "\(candidate.count) bytes")
        }
        let stillVerifies = verifier.isValidSignature(signature, for: message)
        #expect(stillVerifies)
    }

    @Test func signatureByAnotherKeyFails() throws {
        let message = F.tokenMessage
        let other = try F.signingKey("test-rsa2048-b.pem").signature(for: message)
        let otherKeyVerifies = (try F.publicKey("test-rsa2048.pub.pem")).isValidSignature(other, for: message)
        #expect(!otherKeyVerifies)
        let ownKeyVerifies = try F.publicKey("test-rsa2048-b.pub.pem").isValidSignature(other, for: message)
        #expect(ownKeyVerifies)
    }

    /// A signature made under one rule never verifies under another, even
    /// when the lengths would fit (the key decides, never the signature).
    @Test func crossAlgorithmSignaturesFail() throws {
        let message = F.tokenMessage
        let rsa = try F.signingKey("test-rsa2048.pem").signature(for: message)
        let ecdsa = try F.signingKey("test-p256.pem").signature(for: message)
        let ed25519 = try F.signingKey("test-ed25519.pem").signature(for: message)
        let pss = try F.signingKey("test-rsa2048.pem", options: .init(treatsRSAKeysAsPSS: true)).signature(for: message)

        let ecKey = try F.publicKey("test-p256.pub.pem")
        let rsaKey = try F.publicKey("test-rsa2048.pub.pem")
        let edKey = try F.publicKey("test-ed25519.pub.pem")
        let pssKey = try F.publicKey("test-rsa2048.pub.pem", options: .init(treatsRSAKeysAsPSS: true))
        let mismatches: [(String, PublicKey, [UInt8])] = [
            ("P-256 key, RSA signature", ecKey, rsa),
            ("P-256 key, Ed25519 signature (64 bytes: tried as raw r‖s)", ecKey, ed25519),
            ("RSA key, ECDSA signature", rsaKey, ecdsa),
            ("RSA key, Ed25519 signature", rsaKey, ed25519),
            ("RSA key, PSS signature by the same key", rsaKey, pss),
            ("Ed25519 key, RSA signature", edKey, rsa),
            ("Ed25519 key, ECDSA signature", edKey, ecdsa),
            ("PSS key, PKCS#1 signature by the same key", pssKey, rsa),
        ]
        for (label, key, signature) in mismatches {
            let accepted = key.isValidSignature(signature, for: message)
            #expect(!accepted, "\(label)")
        }
        let pssAcceptsPSS = pssKey.isValidSignature(pss, for: message)
        #expect(pssAcceptsPSS)
    }

    /// "A key configured as PSS": a plain RSA key signs and verifies PSS
    /// when told to, and PSS signatures are randomised (salted).
    @Test func treatAsPSSRoundTrip() throws {
        let options = KeyLoadingOptions(treatsRSAKeysAsPSS: true)
        let signer = try F.signingKey("test-rsa2048.pem", options: options)
        let first = try signer.signature(for: F.tokenMessage)
        let second = try signer.signature(for: F.tokenMessage)
        #expect(first != second)
        let verifier = try F.publicKey("test-rsa2048-cert.pem", options: options)
        let firstVerifies = verifier.isValidSignature(first, for: F.tokenMessage)
        #expect(firstVerifies)
        let secondVerifies = verifier.isValidSignature(second, for: F.tokenMessage)
        #expect(secondVerifies)
    }

    /// ECDSA accepts DER and raw r‖s; many signatures so that scalars with a
    /// leading zero byte or the high bit set (which change the DER length)
    /// are covered.
    @Test func ecdsaRawAndDER() throws {
        let signer = try F.signingKey("test-p256.pem")
        let verifier = try F.publicKey("test-p256.pub.pem")
        var derLengths = Set<Int>()
        for round in 0..<300 {
            let message = F.tokenMessage + Array("\(round)".utf8)
            let der = try signer.signature(for: message)
            derLengths.insert(der.count)
            let raw = try F.rawECDSA(fromDER: der)
            #expect(raw.count == 64)
            let derVerifies = verifier.isValidSignature(der, for: message)
            #expect(derVerifies)
            let rawVerifies = verifier.isValidSignature(raw, for: message)
            #expect(rawVerifies)
            var tampered = raw
            tampered[round % 64] ^= 0x04
            let tamperedRawVerifies = verifier.isValidSignature(tampered, for: message)
            #expect(!tamperedRawVerifies)
            let rawVerifiesOtherMessage = verifier.isValidSignature(raw, for: F.tokenMessage)
            #expect(!rawVerifiesOtherMessage)
        }
        #expect(derLengths.count >= 2)  // both 70/71/72-byte forms were exercised
    }

    @Test func ecdsaRawToDEREncoding() {
        func encode(_ raw: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: ECDSASignatureEncoding.maximumDERByteCount)
            var output = out.mutableSpan
            let length = ECDSASignatureEncoding.derFromRaw(raw.span, into: &output)
            return Array(out.prefix(length))
        }
        let highBit = [UInt8](repeating: 0x80, count: 32)
        let small = [UInt8](repeating: 0, count: 31) + [0x05]
        let zero = [UInt8](repeating: 0, count: 32)
        let leadingZero = [0x00, 0x7f] + [UInt8](repeating: 0x11, count: 30)
        #expect(encode(highBit + small) == [0x30, 0x26, 0x02, 0x21, 0x00] + highBit + [0x02, 0x01, 0x05])
        #expect(encode(zero + zero) == [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00])
        #expect(
            encode(leadingZero + highBit) == [0x30, 0x44, 0x02, 0x1f, 0x7f] + [UInt8](repeating: 0x11, count: 30)
                + [0x02, 0x21, 0x00] + highBit
        )
        #expect(encode(highBit + highBit).count == ECDSASignatureEncoding.maximumDERByteCount)
    }

    /// RSA-PSS verification detects the salt length: digest-sized, zero and
    /// maximum salts (all produced by `openssl`) verify.
    @Test("PSS salt lengths", arguments: ["digest", "0", "max", "auto"])
    func pssSaltLengths(saltLength: String) throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        let messageURL = directory.appendingPathComponent("message")
        let signatureURL = directory.appendingPathComponent("signature")
        try F.write(F.tokenMessage, to: messageURL)
        let result = try F.openssl([
            "dgst", "-sha256", "-sign", F.path("test-rsa2048.pem"),
            "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:\(saltLength)",
            "-out", signatureURL.path, messageURL.path,
        ])
        #expect(result.status == 0, "\(result.errorText)")
        let signature = Array(try Data(contentsOf: signatureURL))
        let verifier = try F.publicKey("test-rsa2048.pub.pem", options: .init(treatsRSAKeysAsPSS: true))
        let pssKeyVerifies = verifier.isValidSignature(signature, for: F.tokenMessage)
        #expect(pssKeyVerifies)
        let pkcs1KeyVerifies = (try F.publicKey("test-rsa2048.pub.pem")).isValidSignature(signature, for: F.tokenMessage)
        #expect(!pkcs1KeyVerifies)
    }
}
