import EntitlementTokens
import Foundation
import IntegrationSupport
import RedisRESP
import Synchronization
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// Cluster mode against a real 3-primary / 3-replica cluster (docs/DESIGN.md#high-availability).
extension RedisIntegrationTests {
    @Suite("Redis: Cluster", .enabled(if: Integration.redisHighAvailability, "redis-cli not installed"))
    struct RedisClusterTests {
        struct Attempt: Sendable {
            let owner: Int
            let decision: ReplayDecision
            let afterKill: Bool
        }

        @Test(
            "exactly once over three shards; the write check on every primary; a slot migrated mid-run (ASK, then MOVED) followed; a primary killed: healthy shards never unavailable, its shard back after the replica's promotion"
        )
        func cluster() async throws {
            let cluster = try RedisClusterGroup()
            defer { cluster.remove() }
            let until = timestamp(plus: 600_000)
            let stores = try (0..<2).map { _ in try RedisReplayStore(url: cluster.url, timeout: .seconds(1)) }
            guard case .cluster(let router) = stores[0].client.route else {
                Issue.record("not a cluster route")
                return
            }

            // Exactly once, 4 tasks through two stores, once each store is connected to every shard.
            var generator = SeededGenerator(seed: 2121)
            let warming = await connectToEveryShard(stores, until: until, using: &generator)
            let identities = (0..<1_000).map { _ in randomIdentity(using: &generator) }
            await expectEachAcceptedOnce(identities, through: stores, until: until)
            let primaries = try #require(try await stores[0].client.clusterPrimaries(timeout: .seconds(1)))
            #expect(primaries.count == 3)
            var total = 0
            for (primary, _) in primaries {
                let size = Int(try Integration.redisCLI(["-p", String(primary.port), "DBSIZE"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                #expect(size > 200, "every shard holds its share: \(primary) has \(size)")
                total += size
            }
            #expect(total == identities.count + warming)

            // Readiness and the start-up write check: one key on every primary.
            #expect(await stores[0].healthFailure() == nil)
            try await stores[0].checkWriteAccess()
            for (primary, _) in primaries {
                let keys = try Integration.redisCLI(["-p", String(primary.port), "KEYS", RedisReplayStore.defaultKeyPrefix + ".write-check*"])
                #expect(keys.split(separator: "\n").count == 1, "\(primary): \(keys)")
            }

            // A slot migrated mid-run: ASK while it migrates, MOVED once it moved.
            let existing = identities[0]
            let slot = clusterSlot(existing)
            let source = try #require(primaries.first { $0.1.contains { $0.contains(slot) } }?.0)
            let destination = try #require(primaries.first { $0.0 != source }?.0)
            let sourceID = try cluster.id(port: source.port)
            let destinationID = try cluster.id(port: destination.port)
            try Integration.redisCLI(["-p", String(destination.port), "CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID])
            try Integration.redisCLI(["-p", String(source.port), "CLUSTER", "SETSLOT", String(slot), "MIGRATING", destinationID])
            let fresh = (0..<3).map { _ in identity(inSlot: slot, using: &generator) }
            #expect(await stores[0].accept(fresh[0], until: until, now: timestamp()) == .accepted)
            #expect(await stores[1].accept(fresh[0], until: until, now: timestamp()) == .replayed)
            #expect(await stores[1].accept(existing, until: until, now: timestamp()) == .replayed, "still on the source")
            #expect(router.redirectsFollowed.ask >= 1)
            let keys = try Integration.redisCLI(["-p", String(source.port), "CLUSTER", "GETKEYSINSLOT", String(slot), "100"])
                .split(separator: "\n").map(String.init)
            try #require(!keys.isEmpty)
            try Integration.redisCLI(["-p", String(source.port), "MIGRATE", "127.0.0.1", String(destination.port), "", "0", "5000", "KEYS"] + keys)
            for (primary, _) in primaries {
                try Integration.redisCLI(["-p", String(primary.port), "CLUSTER", "SETSLOT", String(slot), "NODE", destinationID])
            }
            let movedBefore = router.redirectsFollowed.moved
            #expect(await stores[0].accept(existing, until: until, now: timestamp()) == .replayed, "followed to the destination")
            #expect(await stores[0].accept(fresh[0], until: until, now: timestamp()) == .replayed)
            #expect(await stores[0].accept(fresh[1], until: until, now: timestamp()) == .accepted)
            #expect(router.redirectsFollowed.moved > movedBefore)
            print(
                "cluster: slot \(slot) moved \(source) → \(destination); followed \(router.redirectsFollowed.ask) ASK, \(router.redirectsFollowed.moved) MOVED"
            )

            // A primary killed under load (fresh tokens on every shard).
            let store = try RedisReplayStore(url: cluster.url, timeout: .milliseconds(500))
            await store.warmUp()
            guard case .cluster(let loadRouter) = store.client.route else { return }
            let topology = try await loadRouter.topology(timeout: .seconds(1))
            let addresses: [RedisNodeAddress] = primaries.map { $0.0 }
            let victim: RedisNodeAddress = try #require(addresses.first { $0 != destination && $0 != source })
            let shared = LoadState()
            let load = Task {
                await withTaskGroup(of: [Attempt].self) { tasks in
                    for task in 0..<4 {
                        tasks.addTask {
                            var generator = SeededGenerator(seed: UInt64(900 + task))
                            var attempts: [Attempt] = []
                            while !shared.stop.load(ordering: .relaxed) {
                                let identity = randomIdentity(using: &generator)
                                let owner = topology.primary(forSlot: clusterSlot(identity))?.port ?? 0
                                let afterKill = shared.killedAt.withLock { $0 != nil }
                                let decision = await store.accept(identity, until: until, now: timestamp())
                                attempts.append(Attempt(owner: owner, decision: decision, afterKill: afterKill))
                                if decision.isUnavailable { try? await Task.sleep(for: .milliseconds(2)) }
                            }
                            return attempts
                        }
                    }
                    return await tasks.reduce(into: []) { $0 += $1 }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            // Before the signal: stop() waits for the process to be reaped (see RedisSentinelTests).
            shared.killedAt.withLock { $0 = clock.now }
            cluster.node(port: victim.port)?.stop()  // SIGKILL
            var promotedAfter: Double?
            while promotedAfter == nil, clock.now - shared.killedAt.withLock({ $0! }) < .seconds(20) {
                if let current = try? await loadRouter.topology(timeout: .seconds(1)),
                    !current.primaries.contains(victim), current.primaries.count == 3
                {
                    promotedAfter = (clock.now - shared.killedAt.withLock { $0! }).inMilliseconds
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let promotion = try #require(
                promotedAfter,
                "the victim's replica was not promoted within 20 s: \(loadRouter.refreshCount) refreshes, last failure \(loadRouter.lastRefreshFailure.map(String.init(describing:)) ?? "none")"
            )
            try await Task.sleep(for: .seconds(1))
            shared.stop.store(true, ordering: .relaxed)
            let attempts = await load.value
            let healthy = attempts.filter { $0.owner != victim.port }
            let victimShard = attempts.filter { $0.owner == victim.port && $0.afterKill }
            print(
                "cluster: \(victim) killed; the store saw its replica promoted after \(Int(promotion)) ms; healthy shards \(healthy.count) attempts, \(healthy.filter { $0.decision.isUnavailable }.count) unavailable; the victim's shard \(victimShard.count) attempts after the kill, \(victimShard.filter { $0.decision.isUnavailable }.count) unavailable"
            )
            #expect(healthy.allSatisfy { $0.decision == .accepted }, "\(healthy.filter { $0.decision != .accepted }.prefix(3).map(\.decision))")
            #expect(victimShard.contains { $0.decision.isUnavailable })
            #expect(victimShard.last?.decision == .accepted, "the victim's shard accepts again through the promoted replica")
            #expect(await store.healthFailure() == nil)
            for store in stores + [store] { await store.shutdown() }
        }
    }
}
