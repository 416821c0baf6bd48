import EntitlementTokens
import Foundation
import IntegrationSupport
import RedisRESP
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// The TLS forms of Sentinel and Cluster (docs/DESIGN.md#high-availability) against real processes
/// that listen on TLS ports only (`port 0`): every address the client learns
/// (from the sentinels, `CLUSTER SHARDS`, `MOVED`) must be a TLS port, dialled
/// with TLS and verified against the CA.
extension RedisIntegrationTests {
    @Suite("Redis: Sentinel and Cluster over TLS", .enabled(if: Integration.redisHighAvailability, "redis-sentinel or redis-cli not installed"))
    struct RedisHighAvailabilityTLSTests {
        @Test(
            "rediss-sentinel://: accepted once; readiness and the write check; a switchover and then kill -9 of the primary followed to the TLS port the sentinels name; an untrusted CA refused"
        )
        func sentinel() async throws {
            let tls = try RedisTLSFiles()
            defer { tls.remove() }
            let group = try RedisSentinelGroup(replicaCount: 2, sentinelCount: 3, tls: tls)
            defer { group.remove() }
            let until = timestamp(plus: 600_000)
            var generator = SeededGenerator(seed: 2101)

            let store = try RedisReplayStore(url: group.url, timeout: .seconds(1), trustedCAFile: tls.caFile)
            guard case .sentinel(let router) = store.client.route else {
                Issue.record("not a sentinel route")
                return
            }
            // The poll and the subscription, which follow the switchover, run only in the client's Service.run().
            let fresh = try await whileRunning(store.client) { () async throws -> ReplayIdentity in
                #expect(await store.healthFailure() == nil)
                try await store.checkWriteAccess()
                #expect(router.currentPrimary == RedisNodeAddress(host: "127.0.0.1", port: group.primary.port))
                let identities = (0..<50).map { _ in randomIdentity(using: &generator) }
                for identity in identities {
                    #expect(await store.accept(identity, until: until, now: timestamp()) == .accepted)
                }
                for identity in identities {
                    #expect(await store.accept(identity, until: until, now: timestamp()) == .replayed)
                }

                /// Waits until every sentinel names a replica other than `old`; its server.
                func newPrimary(after old: Int) throws -> RedisServer {
                    var named: Int?
                    try Integration.waitUntil("every sentinel names the same replica", seconds: 15) {
                        let ports = try group.sentinels.map { try group.primaryPort(accordingTo: $0) }
                        named = ports[0]
                        return ports.allSatisfy { $0 == ports[0] } && ports[0] != old
                    }
                    return try #require(group.replicas.first { $0.port == named })
                }
                let clock = ContinuousClock()

                // A switchover (SENTINEL FAILOVER): the old primary stays up and
                // says master until the sentinels convert it, 8 s or more later;
                // the store must leave it once the sentinels name the replica (by
                // the TLS port it announced), not when it is converted.
                try Integration.redisCLI(tls.cliArguments + ["-p", String(group.sentinels[0].port), "SENTINEL", "FAILOVER", group.primaryName])
                let promoted = try newPrimary(after: group.primary.port)
                let namedAt = clock.now
                var moved = false
                while !moved, clock.now - namedAt < .seconds(3) {
                    let probe = randomIdentity(using: &generator)
                    let decision = await store.accept(probe, until: until, now: timestamp())
                    moved = router.currentPrimary?.port == promoted.port && decision == .accepted
                    if !moved { try await Task.sleep(for: .milliseconds(20)) }
                }
                let switchover = (clock.now - namedAt).inMilliseconds
                #expect(
                    moved,
                    "the store still writes to \(String(describing: router.currentPrimary)) 3 s after the sentinels named \(promoted.port)"
                )

                // The new primary killed: the sentinels (talking TLS to each other
                // and to the nodes) promote the other replica, which they moved to
                // the new primary during the switchover; the store follows over TLS.
                promoted.stop()  // SIGKILL
                let survivor = try newPrimary(after: promoted.port)
                let fresh = randomIdentity(using: &generator)
                var decision = ReplayDecision.unavailable("not asked yet")
                let start = clock.now
                while decision.isUnavailable, clock.now - start < .seconds(5) {
                    decision = await store.accept(fresh, until: until, now: timestamp())
                    if decision.isUnavailable { try await Task.sleep(for: .milliseconds(50)) }
                }
                print(
                    "sentinel over TLS: the store left the old primary \(Int(switchover)) ms after the sentinels named the new one; after the kill, accepted again \(Int((clock.now - start).inMilliseconds)) ms after they named the next"
                )
                #expect(decision == .accepted, "\(decision)")
                #expect(await store.accept(fresh, until: until, now: timestamp()) == .replayed)
                #expect(router.currentPrimary == RedisNodeAddress(host: "127.0.0.1", port: survivor.port))
                for identity in identities {
                    #expect(await store.accept(identity, until: until, now: timestamp()) == .replayed, "replicated over TLS before the failover")
                }
                #expect(await store.healthFailure() == nil)
                return fresh
            }
            await store.shutdown()

            // Verification is never off: the system's store, another CA.
            for caFile in [nil, tls.otherCAFile] {
                let refused = try RedisReplayStore(url: group.url, timeout: .milliseconds(500), trustedCAFile: caFile)
                let failure = await refused.healthFailure()
                #expect(failure?.code == .tlsFailed, "CA \(caFile ?? "none"): \(String(describing: failure))")
                let identity = randomIdentity(using: &generator)
                try await whileRunning(refused.client) {
                    #expect(await refused.accept(identity, until: until, now: timestamp()).isUnavailable)
                }
            }
            // The CA named in the URL (tls-ca-file=, as a gate names it), with a
            // name the certificate holds. (swift-nio-ssl also accepts an IP SAN
            // equal to the address dialled when a name is given: docs/REDIS.md.)
            let named = try RedisReplayStore(
                url: group.url.replacingOccurrences(of: "#", with: "?tls-server-name=localhost&tls-ca-file=\(tls.caFile)#"),
                timeout: .seconds(1)
            )
            #expect(await named.healthFailure() == nil)
            try await whileRunning(named.client) {
                #expect(await named.accept(fresh, until: until, now: timestamp()) == .replayed)
            }
        }

        @Test(
            "rediss-cluster://: keys on every shard accepted exactly once; the TLS ports from CLUSTER SHARDS, CLUSTER SLOTS and MOVED; readiness and the write check on every primary; an untrusted CA refused"
        )
        func cluster() async throws {
            let tls = try RedisTLSFiles()
            defer { tls.remove() }
            let cluster = try RedisClusterGroup(primaries: 3, replicasEach: 0, tls: tls)
            defer { cluster.remove() }
            let until = timestamp(plus: 600_000)
            let stores = try (0..<2).map { _ in try RedisReplayStore(url: cluster.url, timeout: .seconds(1), trustedCAFile: tls.caFile) }
            guard case .cluster(let router) = stores[0].client.route else {
                Issue.record("not a cluster route")
                return
            }

            // Exactly once, 4 tasks through two stores, once each store is connected to every shard.
            var generator = SeededGenerator(seed: 2102)
            let warming = await connectToEveryShard(stores, until: until, using: &generator)
            let identities = (0..<300).map { _ in randomIdentity(using: &generator) }
            await expectEachAcceptedOnce(identities, through: stores, until: until)
            let primaries = try #require(try await stores[0].client.clusterPrimaries(timeout: .seconds(1)))
            #expect(Set(primaries.map { $0.0.port }) == Set(cluster.nodes.map(\.port)), "the TLS ports, the only ones listening")
            var total = 0
            for (primary, _) in primaries {
                let size =
                    Int(
                        try Integration.redisCLI(cluster.cli + ["-p", String(primary.port), "DBSIZE"])
                            .trimmingCharacters(in: .whitespacesAndNewlines)
                    ) ?? 0
                #expect(size > 50, "every shard holds its share: \(primary) has \(size)")
                total += size
            }
            #expect(total == identities.count + warming)

            // What Redis 7.0 tells a TLS client under tls-cluster yes: CLUSTER SHARDS
            // names `tls-port` only (no `port` with port 0), CLUSTER SLOTS the TLS port.
            let admin = try makeStore("rediss://127.0.0.1:\(cluster.nodes[0].port)", trustedCAFile: tls.caFile).client
            let shards = try await admin.command("CLUSTER", "SHARDS")
            let slots = try await admin.command("CLUSTER", "SLOTS")
            await admin.shutdown()
            let topology = try ClusterTopology(shardsReply: shards, askedHost: "127.0.0.1", tls: true)
            #expect(try ClusterTopology(slotsReply: slots, askedHost: "127.0.0.1") == topology)
            #expect(topology.primaries == primaries.map { $0.0 })
            #expect(throws: RedisReplyShapeError.self) { try ClusterTopology(shardsReply: shards, askedHost: "127.0.0.1", tls: false) }

            // Readiness and the start-up write check: one key on every primary.
            #expect(await stores[0].healthFailure() == nil)
            try await stores[0].checkWriteAccess()
            for (primary, _) in primaries {
                let keys = try Integration.redisCLI(
                    cluster.cli + ["-p", String(primary.port), "KEYS", RedisReplayStore.defaultKeyPrefix + ".write-check*"]
                )
                #expect(keys.split(separator: "\n").count == 1, "\(primary): \(keys)")
            }

            // An empty slot handed to another primary: the stores' topology is
            // stale, the old owner answers MOVED with the new owner's TLS port.
            func owner(_ slot: Int) -> RedisNodeAddress? { primaries.first { $0.1.contains { $0.contains(slot) } }?.0 }
            func keys(inSlot slot: Int, on node: RedisNodeAddress) throws -> String {
                try Integration.redisCLI(cluster.cli + ["-p", String(node.port), "CLUSTER", "COUNTKEYSINSLOT", String(slot)])
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var fresh = randomIdentity(using: &generator)
            while let node = owner(clusterSlot(fresh)), try keys(inSlot: clusterSlot(fresh), on: node) != "0" {
                fresh = randomIdentity(using: &generator)
            }
            let slot = clusterSlot(fresh)
            let source = try #require(owner(slot))
            let destination = try #require(primaries.first { $0.0 != source }?.0)
            let sourceID = try cluster.id(port: source.port)
            let destinationID = try cluster.id(port: destination.port)
            try Integration.redisCLI(cluster.cli + ["-p", String(destination.port), "CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID])
            try Integration.redisCLI(cluster.cli + ["-p", String(source.port), "CLUSTER", "SETSLOT", String(slot), "MIGRATING", destinationID])
            for (primary, _) in primaries {
                try Integration.redisCLI(cluster.cli + ["-p", String(primary.port), "CLUSTER", "SETSLOT", String(slot), "NODE", destinationID])
            }
            let movedBefore = router.redirectsFollowed.moved
            #expect(await stores[0].accept(fresh, until: until, now: timestamp()) == .accepted)
            #expect(await stores[1].accept(fresh, until: until, now: timestamp()) == .replayed)
            #expect(router.redirectsFollowed.moved > movedBefore)
            #expect(try keys(inSlot: slot, on: destination) == "1", "the key is on the new owner")
            for store in stores { await store.shutdown() }

            // Verification is never off: the system's store, another CA.
            for caFile in [nil, tls.otherCAFile] {
                let refused = try RedisReplayStore(url: cluster.url, timeout: .milliseconds(500), trustedCAFile: caFile)
                let failure = await refused.healthFailure()
                #expect(failure?.code == .tlsFailed, "CA \(caFile ?? "none"): \(String(describing: failure))")
                #expect(await refused.accept(randomIdentity(using: &generator), until: until, now: timestamp()).isUnavailable)
                await refused.shutdown()
            }
        }
    }
}
