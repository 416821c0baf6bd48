import Foundation
import Testing

@testable import EntitlementTokens

/// Several trusted keys at once: rotation (docs/DESIGN.md#signatures-and-keys).
@Suite("Signature: key ring")
struct SignatureKeyRingTests {
    typealias F = SignatureFixtures

    @Test func rotationVerifiesEitherKeyAndNamesIt() throws {
        let old = try F.publicKey("test-rsa2048.pub.pem")
        let new = try F.publicKey("test-rsa2048-b.pub.pem")
        let ring = KeyRing([old, new])
        let message = F.tokenMessage
        let byOld = try F.signingKey("test-rsa2048.pem").signature(for: message)
        let byNew = try F.signingKey("test-rsa2048-b.pem").signature(for: message)
        let byStranger = try F.signingKey("test-rsa3072.pem").signature(for: message)

        #expect(ring.verifyingKey(for: byOld, message: message) == old)
        #expect(ring.verifyingKey(for: byNew, message: message) == new)
        #expect(ring.verifyingKey(for: byNew, message: message)?.source == F.path("test-rsa2048-b.pub.pem"))
        #expect(ring.verifyingKey(for: byStranger, message: message) == nil)
        var tampered = message
        tampered[0] = UInt8(ascii: "[")
        #expect(ring.verifyingKey(for: byNew, message: tampered) == nil)
        // Order of trust does not matter for the answer.
        #expect(KeyRing([new, old]).verifyingKey(for: byOld, message: message) == old)
    }

    /// One ring may mix key types; each signature finds its own key.
    @Test func mixedRingLoadedFromADirectory() throws {
        let directory = try F.temporaryDirectory()
        defer { F.removeTemporary(directory) }
        for name in ["test-rsa2048.pub.pem", "test-p256.pub.pem", "test-ed25519.pub.pem", "test-rsapss2048.pub.pem"] {
            try F.write(F.bytes(name), to: directory.appendingPathComponent(name))
        }
        let ring = try KeyRing.load(paths: [directory.path])
        #expect(ring.keys.count == 4)
        for (privateName, publicName) in [
            ("test-rsa2048.pem", "test-rsa2048.pub.pem"),
            ("test-p256.pem", "test-p256.pub.pem"),
            ("test-ed25519.pem", "test-ed25519.pub.pem"),
            ("test-rsapss2048.pem", "test-rsapss2048.pub.pem"),
        ] {
            let signature = try F.signingKey(privateName).signature(for: F.tokenMessage)
            let message = F.tokenMessage
            let key = ring.verifyingKey(for: signature, message: message.span)
            #expect(key == (try F.publicKey(publicName)), "\(privateName)")
            #expect(key?.source == directory.appendingPathComponent(publicName).path)
        }
    }

    @Test func emptyRingVerifiesNothing() throws {
        let signature = try F.signingKey("test-ed25519.pem").signature(for: F.tokenMessage)
        #expect(KeyRing([]).verifyingKey(for: signature, message: F.tokenMessage) == nil)
    }

    @Test func loadingSeveralPathsKeepsTheirOrder() throws {
        let ring = try KeyRing.load(paths: [F.path("test-ed25519.pub.pem"), F.path("test-two-keys.pub.pem")])
        #expect(ring.keys.map(\.algorithm) == [.ed25519, .rsaPKCS1SHA256, .ecdsaP256SHA256])
    }

    @Test func oneBadPathFailsTheWholeLoad() throws {
        #expect(throws: KeyError(code: .insecureKeySize, source: F.path("test-rsa1024.pub.pem"), message: "")) {
            _ = try KeyRing.load(paths: [F.path("test-rsa2048.pub.pem"), F.path("test-rsa1024.pub.pem")])
        }
        let ring = try KeyRing.load(
            paths: [F.path("test-rsa2048.pub.pem"), F.path("test-rsa1024.pub.pem")],
            options: .init(allowsInsecureKeySizes: true)
        )
        #expect(ring.keys.map(\.bits) == [2048, 1024])
    }
}
