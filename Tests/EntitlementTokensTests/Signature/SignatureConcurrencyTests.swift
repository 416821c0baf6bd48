import Foundation
import Testing

@testable import EntitlementTokens

/// One key shared by many concurrent verifiers: the pooled OpenSSL contexts
/// must never be used by two threads at once, and never leak a result from
/// one call into another.
@Suite("Signature: concurrency")
struct SignatureConcurrencyTests {
    typealias F = SignatureFixtures

    @Test(
        "Concurrent verifies with one shared key",
        arguments: [
            ("test-rsa2048.pem", "test-rsa2048.pub.pem"),
            ("test-rsapss2048.pem", "test-rsapss2048.pub.pem"),
            ("test-p256.pem", "test-p256.pub.pem"),
            ("test-ed25519.pem", "test-ed25519.pub.pem"),
        ]
    )
    func sharedKey(privateName: String, publicName: String) async throws {
        let key = try F.publicKey(publicName)
        let signer = try F.signingKey(privateName)
        // Distinct messages, so a context that leaked state between calls
        // would give some task another task's answer.
        let messages = (0..<16).map { F.tokenMessage + Array("<n>\($0)</n>".utf8) }
        let signatures = try messages.map { try signer.signature(for: $0) }

        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<64 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<8 {
                        let index = (task + round) % messages.count
                        let other = (index + 1) % messages.count
                        if !key.isValidSignature(signatures[index], for: messages[index]) { wrong += 1 }
                        if key.isValidSignature(signatures[other], for: messages[index]) { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(key.storage.verifier.idleContextCount <= OpenSSLContextPool<PublicKeyOperationContext>.defaultCapacity)
        #expect(key.storage.verifier.idleContextCount >= 1)
    }

    /// Real threads (not only the cooperative pool), and a ring shared by all.
    @Test func sharedRingFromManyThreads() throws {
        let ring = KeyRing([
            try F.publicKey("test-rsa2048.pub.pem"), try F.publicKey("test-p256.pub.pem"),
            try F.publicKey("test-ed25519.pub.pem"),
        ])
        let signers = [
            try F.signingKey("test-rsa2048.pem"), try F.signingKey("test-p256.pem"),
            try F.signingKey("test-ed25519.pem"),
        ]
        let signatures = try signers.map { try $0.signature(for: F.tokenMessage) }
        let failures = SignatureTestCounter()
        DispatchQueue.concurrentPerform(iterations: 48) { iteration in
            let which = iteration % 3
            let found = ring.verifyingKey(for: signatures[which], message: F.tokenMessage)
            if found != ring.keys[which] { failures.increment() }
            var tampered = F.tokenMessage
            tampered[iteration % tampered.count] ^= 1
            if ring.verifyingKey(for: signatures[which], message: tampered) != nil { failures.increment() }
        }
        #expect(failures.value == 0)
    }

    /// One signing key shared by real threads: its pooled sign contexts are
    /// never used by two at once, and each signature is over its own message
    /// (the CDN exchange signs a CAT ES256 or a CloudFront token per request).
    @Test(arguments: ["test-rsa2048.pem", "test-rsapss2048.pem", "test-p256.pem", "test-ed25519.pem"])
    func sharedSigningKeyFromManyThreads(privateName: String) throws {
        let signer = try F.signingKey(privateName)
        let messages = (0..<16).map { F.tokenMessage + Array("<n>\($0)</n>".utf8) }
        let failures = SignatureTestCounter()
        DispatchQueue.concurrentPerform(iterations: 64) { iteration in
            for round in 0..<4 {
                let index = (iteration + round) % messages.count
                guard let signature = try? signer.signature(for: messages[index]) else {
                    failures.increment()
                    continue
                }
                if !signer.publicKey.isValidSignature(signature, for: messages[index]) { failures.increment() }
                if signer.publicKey.isValidSignature(signature, for: messages[(index + 1) % messages.count]) { failures.increment() }
            }
        }
        #expect(failures.value == 0)
    }

    /// The pool keeps at most `capacity` idle contexts and frees the rest.
    @Test func poolIsBounded() async {
        final class Box: Sendable {}
        let made = SignatureTestCounter()
        let pool = OpenSSLContextPool<Box>(first: nil, capacity: 2) {
            made.increment()
            return Box()
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    _ = pool.withContext { _ in Thread.sleep(forTimeInterval: 0.001) }
                }
            }
        }
        #expect(pool.idleCount <= 2)
        #expect(pool.idleCount >= 1)
        #expect(made.value >= 1)
        // Sequential use reuses one context: nothing more is made.
        let before = made.value
        for _ in 0..<10 { _ = pool.withContext { _ in 0 } }
        #expect(made.value == before)
    }
}

/// A thread-safe counter for the tests above.
final class SignatureTestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
