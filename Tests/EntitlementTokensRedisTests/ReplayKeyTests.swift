import EntitlementTokens
import Foundation
import RedisRESP
import Synchronization
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

@Suite("Redis: replay keys and decisions")
struct ReplayKeyTests {
    /// Foundation's Base64, made URL-safe and unpadded: an independent encoder.
    static func foundationBase64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("Base64url without padding, appended after a prefix, agrees with Foundation's", arguments: 0...40)
    func base64URL(length: Int) {
        var generator = SeededGenerator(seed: UInt64(length))
        let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var output = Array("k:".utf8)
        Base64.append(bytes.span, alphabet: .url, padded: false, to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "k:" + Self.foundationBase64URL(bytes))
    }

    @Test("the key is the prefix and 43 characters of SHA-256")
    func key() {
        let digest = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + 250) }
        let key = ReplayKey.bytes(prefix: Array("p:".utf8), identity: ReplayIdentity(digest: digest))
        #expect(String(decoding: key, as: UTF8.self) == "p:" + Self.foundationBase64URL(digest))
        #expect(key.count == 2 + 43)
    }

    /// Remembers the identity the verifier asks about.
    final class AskedStore: ReplayStore {
        let asked = Mutex<[ReplayIdentity]>([])
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            acceptWithoutWaiting(identity, until: until, now: now)!
        }
        func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
            asked.withLock { $0.append(identity) }
            return .accepted
        }
    }

    /// Servers of two versions share one Redis during a rolling upgrade: a
    /// token accepted by one must be a replay on the other, so the key of a
    /// token never changes. Pinned for the first sample token: its signed
    /// bytes (the `<authToken>` element as sent) hashed by
    /// `openssl dgst -sha256 -binary | base64`, made URL-safe — the key every
    /// release so far writes, whichever code hashed the bytes.
    @Test("the Redis key of a sample media token is the one earlier versions write")
    func keyOfASampleTokenIsPinned() throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Samples").standardizedFileURL
        let text = try String(contentsOf: samples.appendingPathComponent("tokens/valid.txt"), encoding: .utf8)
        let token = try #require(text.split(separator: "\n").first.map(String.init))
        let ring = try KeyRing.load(paths: [samples.appendingPathComponent("keys/trusted/test-rsa2048.pub.pem").path])
        let store = AskedStore()
        let issuedPlusThreeMinutes = TokenTimestamp(millisecondsSince1970: 1_768_478_580_000)!
        let verifier = TokenVerifier(
            signature: .trustedKeys(ring),
            policy: VerificationPolicy(replayStore: store, clock: { issuedPlusThreeMinutes })
        )
        let verdict: Verdict = verifier.verify(token)
        #expect(verdict.status == .validToken, "\(verdict)")
        let asked = store.asked.withLock { $0 }
        #expect(asked.count == 1)
        let identity = try #require(asked.first)
        #expect(verdict.identity == identity)
        let key = ReplayKey.bytes(prefix: Array(RedisReplayStore.defaultKeyPrefix.utf8), identity: identity)
        #expect(String(decoding: key, as: UTF8.self) == "tokeninspect:replay:xPAlEVt4WTm8aNnE2gYZrQ7I7dG5MwPv2hL9hrBXk-E")
    }

    @Test("OK accepts, null is a replay, anything else is unavailable")
    func decisions() {
        #expect(RedisReplayStore.decision(for: .simpleString(Array("OK".utf8))) == .accepted)
        #expect(RedisReplayStore.decision(for: .null) == .replayed)
        for reply: RESPReply in [
            .error(Array("READONLY You can't write against a read only replica.".utf8)),
            .simpleString(Array("QUEUED".utf8)), .integer(1), .bulkString(Array("OK".utf8)), .array([]),
        ] {
            guard case .unavailable(let reason) = RedisReplayStore.decision(for: reply) else {
                Issue.record("\(reply) was not unavailable")
                continue
            }
            #expect(reason.contains("SET"))
        }
        guard case .unavailable(let reason) = RedisReplayStore.decision(for: .error(Array("OOM command not allowed".utf8))) else {
            Issue.record("OOM was not unavailable")
            return
        }
        #expect(reason.contains("OOM command not allowed"))
        #expect(reason.contains("errorReply"))
    }
}
