import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

/// One-time use whatever a gate's clock says (docs/DESIGN.md#clocks-and-one-time-use,
/// issue 47): real `tokengate serve` processes whose wall clocks run 20 s off
/// (libfaketime), sharing one real `redis-server` on 127.0.0.1, with the
/// default leeway of 30 s.
///
/// A replay entry written with an absolute expiry computed from a gate's clock
/// landed in Redis's past when that gate ran behind, and Redis dropped it at
/// once: the gate allowed the same token at every presentation.
@Suite(
    .serialized,
    .enabled(if: Integration.redis, "redis-server not installed"),
    .enabled(if: Integration.fakeTime, "faketime not installed (apt-get install faketime)"),
    .enabled(if: GateProcess.binary != nil || Integration.required, "the tokengate executable is not built"),
    .holdsMachineLock
)
struct ClockSkewTests {
    static let leeway: Int64 = 30_000

    /// A Base64url media token that expired `late` milliseconds ago by the true
    /// clock (negative: expires in that many), issued with the minter's default TTL.
    static func mediaToken(expiredAgo late: Int64) -> String {
        var request = GateFixtures.request(.media)
        request.issueTime = TokenTimestamp.now().adding(milliseconds: -(request.ttlMilliseconds + late))!
        return GateFixtures.token(request)
    }

    /// `status tokenStatus` of the gate's auth answer for `token`.
    static func present(_ token: String, to gate: GateProcess) async throws -> String {
        let answer = try await RawHTTP.fetch(
            port: gate.port,
            "/v1/auth-request",
            headers: [("X-Original-URI", "/live/tnt.m3u8?token=\(token)")]
        )
        return "\(answer.status) \(answer.tokenStatus ?? "-")"
    }

    func gates(_ redis: RedisServer, offsets: [Int]) async throws -> [GateProcess] {
        let gates = try await offloaded {
            try offsets.map { try GateProcess(["--replay", redis.url, "--replay-timeout", "2000"], clockOffset: $0) }
        }
        for gate in gates {
            let ready = try await offloaded { eventually(within: 10) { try RawHTTP.get(port: gate.port, "/readyz").status == 200 } }
            #expect(ready.held, "gate \(gate.port) not ready:\n\(gate.log.suffix(1000))")
        }
        return gates
    }

    /// The issue's finding, and its mirror: a gate 20 s behind Redis (and
    /// the token's issuer) sees a token that expired 40 s ago as 20 s late,
    /// inside its leeway; a gate 20 s ahead sees one expiring now the same
    /// way. Presented five times, it is allowed once.
    @Test(arguments: [-20, 20])
    func aGateOffByTwentySecondsAllowsATokenInsideItsLeewayOnce(offset: Int) async throws {
        try await withRedisServer { redis in
            let gate = try await gates(redis, offsets: [offset])[0]
            defer { gate.stop() }
            let token = Self.mediaToken(expiredAgo: 20_000 - Int64(offset) * 1000)
            var answers: [String] = []
            for _ in 0..<5 {
                answers.append(try await Self.present(token, to: gate))
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(answers == ["200 VALID_TOKEN"] + Array(repeating: "403 TOKEN_REPLAYED", count: 4), "gate \(offset) s off: \(answers)")
            // The entry Redis holds outlives every gate that could still take
            // the token: its own 10 s of leeway left, plus twice the leeway for
            // a gate whose clock is up to a leeway behind the issuer's while
            // the writer's is up to a leeway ahead.
            let keys = try Integration.redisCLI(["-p", "\(redis.port)", "--scan", "--pattern", "tokeninspect:replay:*"])
                .split(separator: "\n").filter { !$0.contains(".write-check") }
            #expect(keys.count == 1, "\(keys)")
            if let key = keys.first {
                let left =
                    Int(try Integration.redisCLI(["-p", "\(redis.port)", "PTTL", String(key)]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
                print("gate \(offset) s off: the replay entry has \(left) ms left (10 s of the writer's leeway + 60 s)")
                #expect(left > 60_000 && left <= 70_000, "PTTL \(left) ms")
            }
        }
    }

    /// Gates at −20 s, 0 and +20 s judge a token at the edge of its TTL the
    /// same way (inside the leeway: a gate that refuses it as replayed ran
    /// every other check first), and the fleet allows it once. Then a
    /// gate whose clock is behind the writer's, asked after the writer's own
    /// window has closed, still finds the entry.
    @Test func gatesTwentySecondsApartAllowATokenAtTheEdgeOfItsTTLOnce() async throws {
        try await withRedisServer { redis in
            let fleet = try await gates(redis, offsets: [-20, 0, 20])
            defer { for gate in fleet { gate.stop() } }
            let (slow, exact, fast) = (fleet[0], fleet[1], fleet[2])

            // Expired 5 s ago: the fast gate sees 25 s late, the slow one 15 s early.
            let edge = Self.mediaToken(expiredAgo: 5_000)
            var answers: [String] = []
            for gate in [fast, exact, slow, fast, exact, slow] { answers.append(try await Self.present(edge, to: gate)) }
            #expect(answers == ["200 VALID_TOKEN"] + Array(repeating: "403 TOKEN_REPLAYED", count: 5), "\(answers)")

            // Accepted by the exact gate 28 s after its expiry: an entry that
            // lived only while that gate could accept it (an absolute expiry,
            // expiry + leeway) would be gone 2 s later, when the slow gate
            // still sees the token 10.5 s late.
            let late = Self.mediaToken(expiredAgo: 28_000)
            #expect(try await Self.present(late, to: exact) == "200 VALID_TOKEN")
            try await Task.sleep(for: .milliseconds(2_500))
            #expect(try await Self.present(late, to: slow) == "403 TOKEN_REPLAYED")
            #expect(try await Self.present(late, to: fast) == "401 TOKEN_EXPIRED")

            // Accepted by the fast gate, which sees it 28 s late: an entry
            // that lived only for the writer's own 2 s of leeway left (a
            // relative lifetime without the allowance for other clocks) would
            // be gone when the slow gate, 40 s behind the writer, sees the
            // token 9.5 s before its expiry.
            let early = Self.mediaToken(expiredAgo: 8_000)
            #expect(try await Self.present(early, to: fast) == "200 VALID_TOKEN")
            try await Task.sleep(for: .milliseconds(2_500))
            #expect(try await Self.present(early, to: slow) == "403 TOKEN_REPLAYED")
            #expect(try await Self.present(early, to: exact) == "403 TOKEN_REPLAYED")
        }
    }
}
