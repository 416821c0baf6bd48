import Synchronization
import Testing

@testable import EntitlementTokens

/// docs/DESIGN.md#one-of-each-per-request (issue 22 item 2): the SHA-256 of a token's signed
/// bytes is made once per verification — by the signature check, or by the
/// replay check when no key hashed them — and the replay identity and the
/// verdict's identity are that digest. A replay store shared by servers of
/// two versions must be asked the same identity for the same token, so every
/// identity here is compared with one hashed from the bytes independently.
@Suite struct SharedDigestTests {
    /// Remembers every identity it was asked about; accepts each once.
    final class RecordingStore: ReplayStore {
        let asked = Mutex<[ReplayIdentity]>([])
        private let inner = InMemoryReplayStore()

        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            acceptWithoutWaiting(identity, until: until, now: now)!
        }

        func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
            asked.withLock { $0.append(identity) }
            return inner.acceptWithoutWaiting(identity, until: until, now: now)
        }
    }

    /// The signed bytes hashed on their own: a one-shot `EVP_Digest`, not
    /// the signature check's shared digest.
    static func independentIdentity(_ token: String) throws -> ReplayIdentity {
        let decoded = try TokenDecoder().decode(token)
        return ReplayIdentity(sha256Of: decoded.signedBytes.span)
    }

    static let keys = ["test-rsa2048.pem", "test-p256.pem", "test-ed25519.pem"]

    @Test("the replay identity from the signature's digest is the SHA-256 of the signed bytes", arguments: keys)
    func replayIdentityIsTheSignedBytesDigest(key: String) throws {
        let store = RecordingStore()
        let verifier = Minting.verifier(Minting.ring("test-rsa2048.pub.pem", "test-p256.pub.pem", "test-ed25519.pub.pem")) {
            $0.replayStore = store
        }
        var request = Minting.request(.media)
        request.sessionGUID = "shared-digest-\(key)"
        let token = Minting.token(request, key: Minting.key(key))
        let verdict = verifier.verify(token)
        #expect(verdict.status == .validToken, "\(verdict)")
        let asked = store.asked.withLock { $0 }
        let expected = try Self.independentIdentity(token)
        #expect(asked == [expected])
        #expect(expected.digest.count == 32)
        #expect(verdict.identity == expected)
        // The replay's refusal carries the same identity.
        let replayed = verifier.verify(token)
        #expect(replayed.status == .tokenReplayed)
        #expect(replayed.identity == expected)
        #expect(store.asked.withLock { $0 } == [expected, expected])
    }

    @Test("a ring of Ed25519 keys only hashes the signed bytes once, for the replay check")
    func ed25519OnlyRingHashesForTheReplayCheck() throws {
        let store = RecordingStore()
        let verifier = Minting.verifier(Minting.ring("test-ed25519.pub.pem")) { $0.replayStore = store }
        let token = Minting.token(Minting.request(.media), key: Minting.key("test-ed25519.pem"))
        let verdict = verifier.verify(token)
        #expect(verdict.status == .validToken, "\(verdict)")
        #expect(verdict.identity == (try Self.independentIdentity(token)))
        #expect(store.asked.withLock { $0 } == [verdict.identity])
    }

    @Test("the verdict carries the digest only when the verification made one")
    func identityOnlyWhenComputed() throws {
        let authorization = Minting.token(Minting.request(.authorization))
        // RSA hashed the signed bytes: a reusable token gets the identity too (the gate logs it).
        let checked = Minting.verifier().verify(authorization)
        #expect(checked.status == .validToken)
        #expect(checked.identity == (try Self.independentIdentity(authorization)))
        // A refusal after the signature check keeps it.
        let wrongResource = Minting.verifier { $0.resourceID = "CNN" }.verify(authorization)
        #expect(wrongResource.status == .invalidResourceID)
        #expect(wrongResource.identity == checked.identity)
        // A signature no trusted key can have made (P-256 against RSA) is refused before any hashing.
        let p256 = Minting.token(Minting.request(.authorization), key: Minting.key("test-p256.pem"))
        let refused = Minting.verifier().verify(p256)
        #expect(refused.status == .invalidSignature)
        #expect(refused.identity == nil)
        // Nothing hashed: signatures not checked, a reusable token.
        let unchecked = TokenVerifier(signature: .insecureSkipped, policy: VerificationPolicy(clock: { Minting.issued }))
        #expect(unchecked.verify(authorization).identity == nil)
        // Not decoded, nothing to hash.
        #expect(Minting.verifier().verify("not a token").identity == nil)
    }
}
