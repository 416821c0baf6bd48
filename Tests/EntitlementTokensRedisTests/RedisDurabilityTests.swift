import EntitlementTokens
import Foundation
import IntegrationSupport
import RedisRESP
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// `replicated` durability (docs/DESIGN.md#durability): `WAIT 1 <remaining ms>` after `OK`.
extension RedisIntegrationTests {
    @Suite("Redis: replicated durability")
    struct RedisDurabilityTests {
        @Test("with a replica: accepted once a replica acknowledges; without one: unavailable within the deadline, and the token is spent")
        func replicated() async throws {
            try await withRedisServer(["--repl-diskless-sync-delay", "0"]) { primary in
                let until = timestamp(plus: 600_000)
                // No replica: WAIT answers 0 at the deadline.
                let lonely = try RedisReplayStore(url: primary.url, timeout: .milliseconds(100), durability: .replicated)
                await lonely.warmUp()
                let identity = ReplayIdentity(digest: Array(repeating: 7, count: 32))
                let (decision, elapsed) = await milliseconds { await lonely.accept(identity, until: until, now: timestamp()) }
                #expect(decision.isUnavailable && decision.reason.contains("notReplicated") || decision.reason.contains("timedOut"), "\(decision)")
                // No longer than the deadline plus what a loaded machine adds to a timer; a WAIT
                // sent with 0 (forever) or in seconds would be caught by the 1 s bound all the same.
                #expect(elapsed >= 80 && elapsed <= 1000, "WAIT waits out the deadline, no longer: \(elapsed) ms")
                // The client's deadline and WAIT's end at the same moment: when the client's timer wins,
                // the connection is still held by the WAIT out on the server and the next decision may be
                // unavailable too. What must never come is `.accepted`: asked again until the store answers.
                var again = await lonely.accept(identity, until: until, now: timestamp())
                let retrying = ContinuousClock.now
                while again.isUnavailable, ContinuousClock.now - retrying < .seconds(5) {
                    try await Task.sleep(for: .milliseconds(50))
                    again = await lonely.accept(identity, until: until, now: timestamp())
                }
                #expect(again == .replayed, "a 503 after OK has spent the token: \(again)")
                let admin = try adminClient(primary.url)
                #expect(try await admin.integer("DBSIZE") == 1)

                // The same store, primary durability: OK is enough.
                let plain = try RedisReplayStore(url: primary.url, timeout: .milliseconds(100))
                #expect(await plain.accept(ReplayIdentity(digest: Array(repeating: 8, count: 32)), until: until, now: timestamp()) == .accepted)

                // With a replica in sync: accepted, and the replica holds every key at once.
                try await withRedisServer(["--replicaof", "127.0.0.1", String(primary.port)]) { replica in
                    let replicaAdmin = try adminClient(replica.url)
                    let start = ContinuousClock.now
                    while try await replicaAdmin.info("replication", field: "master_link_status") != "up",
                        ContinuousClock.now - start < .seconds(10)
                    {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    // A deadline for a loaded CI machine: this test is about acknowledgements, not speed.
                    let store = try RedisReplayStore(url: primary.url, timeout: .seconds(2), durability: .replicated)
                    await store.warmUp()
                    var generator = SeededGenerator(seed: 33)
                    let identities = (0..<2_000).map { _ in randomIdentity(using: &generator) }
                    let decisions = await withTaskGroup(of: [ReplayDecision].self) { tasks in
                        for task in 0..<8 {
                            tasks.addTask {
                                var result: [ReplayDecision] = []
                                for index in stride(from: task, to: identities.count, by: 8) {
                                    result.append(await store.accept(identities[index], until: until, now: timestamp()))
                                }
                                return result
                            }
                        }
                        return await tasks.reduce(into: []) { $0 += $1 }
                    }
                    #expect(decisions.allSatisfy { $0 == .accepted }, "\(decisions.filter { $0 != .accepted }.prefix(3))")
                    // Every acknowledged key is on the replica now (WAIT said so).
                    #expect(try await replicaAdmin.integer("DBSIZE") == 2_002)
                    // WAIT's follow-up and the held requests returned every reservation.
                    #expect(store.client.outstanding.requests == 0)
                    await store.shutdown()
                    await replicaAdmin.shutdown()
                }
                for store in [lonely, plain] { await store.shutdown() }
                await admin.shutdown()
            }
        }
    }
}
