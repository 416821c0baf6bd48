import Foundation
import IntegrationSupport
import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// Sentinel and Cluster clients driven through their `Service.run()`, the
/// only home of their background work (docs/DESIGN.md#the-redis-clients-state-machines):
/// the work happens with no request in flight, and when `run()` ends it
/// leaves nothing behind.
extension RedisIntegrationTests {
    @Suite(
        "Redis: Sentinel and Cluster clients as a Service",
        .enabled(if: Integration.redisHighAvailability, "redis-sentinel or redis-cli not installed")
    )
    struct RedisClientServiceHighAvailabilityTests {
        /// The poll slowed to 60 s, so only the subscription that `run()`
        /// keeps can move the client; no request is sent from the switchover
        /// until the client names the new primary.
        @Test(
            "Sentinel under run(): a switchover followed by the +switch-master subscription alone; run() ends promptly and the subscription's connection is closed"
        )
        func sentinelFollowsTheSubscriptionUnderRun() async throws {
            let group = try RedisSentinelGroup(sentinelPassword: "sentinel-pw")
            defer { group.remove() }
            let url =
                "redis-sentinel://" + group.sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
                + "?sentinel-password=sentinel-pw#\(group.primaryName)"
            var configuration = try RedisClientConfiguration(url: url)
            // 3 s, not 1: under CI's whole parallel suite a sentinel's or a
            // node's answer took over a second, which failed the first
            // discovery once and, another time, held the discovery that
            // +switch-master starts until after the old primary's conversion.
            configuration.operationTimeout = .seconds(3)
            let client = try RedisClient(configuration: configuration)
            guard case .sentinel(let router) = client.route else {
                Issue.record("not a sentinel route")
                return
            }
            router.watchInterval = .seconds(60)
            let clock = ContinuousClock()
            func subscriptions(on sentinel: RedisSentinelProcess) throws -> Int {
                try Integration.redisCLI(["-p", String(sentinel.port), "--no-auth-warning", "-a", "sentinel-pw", "CLIENT", "LIST"])
                    .split(separator: "\n").filter { $0.contains(" sub=1 ") }.count
            }

            var bodyEnded = clock.now
            let subscribed = try await whileRunning(client) { () async throws -> Int in
                // Only the precondition: the first discovery, under CI's whole
                // parallel suite, once outlasted the 1 s operation timeout.
                let discoveryDeadline = clock.now + .seconds(20)
                while true {
                    do {
                        try await client.ping()
                        break
                    } catch  where clock.now < discoveryDeadline {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
                #expect(router.currentPrimary?.port == group.primary.port)
                // Only the precondition: quiet it takes milliseconds, under CI's whole parallel suite it once took more than 5 s.
                try Integration.waitUntil("the subscription is up", seconds: 20) { router.subscribedSentinel != nil }
                let subscribed = try #require(router.subscribedSentinel)
                let sentinel = group.sentinels[subscribed]
                #expect(try subscriptions(on: sentinel) == 1, "the sentinel lists the client's subscription")
                let discoveries = router.discoveryCount
                let oldPort = group.primary.port
                try Integration.waitUntil("the sentinel starts a failover", seconds: 10) {
                    try Integration.redisCLI([
                        "-p", String(sentinel.port), "--no-auth-warning", "-a", "sentinel-pw",
                        "SENTINEL", "FAILOVER", group.primaryName,
                    ]).hasPrefix("OK")
                }
                // No request from here until the client has moved: only run()'s work can move it.
                // 20 s, as the file's other waits: the failover itself once took more than 12 s
                // under CI's whole parallel suite. The poll sleeps 60 s, so a client that never
                // follows the subscription still fails here.
                try Integration.waitUntil("the client names the new primary", seconds: 20) {
                    router.currentPrimary.map { $0.port != oldPort } ?? false
                }
                let movedAt = Date()
                // The old primary says master until the sentinels convert it, 8 s or more after the switch,
                // and the poll sleeps 60 s: a move before that conversion came from the subscription. The
                // order is the mark, not a time a loaded machine stretches (2.6 s once in CI, ms when quiet).
                let sentinels = RedisIntegrationTests.RedisSentinelTests.self
                let switchedAt = try #require(
                    sentinels.loggedAt(sentinel.log, "+switch-master \(group.primaryName) "),
                    "no +switch-master in the sentinel's log"
                )
                let moved = movedAt.timeIntervalSince(switchedAt) * 1000
                let converted = sentinels.convertedAt(group, oldPrimaryPort: oldPort)
                #expect(
                    converted.map { movedAt < $0 } ?? true,
                    "the client moved \(Int(moved)) ms after +switch-master, only once the old primary was converted"
                )
                #expect(router.switchMessages >= 1)
                #expect(router.discoveryCount > discoveries)
                #expect(group.replicas.contains { $0.port == router.currentPrimary?.port })
                #expect(try await client.send(RESPCommand("SET", "service-test", "1")) == .simpleString(Array("OK".utf8)))
                print("Sentinel under run(): moved \(Int(moved)) ms after the sentinel logged +switch-master, with no request in flight")
                bodyEnded = clock.now
                return subscribed
            }
            let ending = (clock.now - bodyEnded).inMilliseconds
            #expect(ending < 5000, "run() ended \(Int(ending)) ms after it was cancelled")
            #expect(router.subscribedSentinel == nil)
            // The connection was closed before run() returned; the sentinel notices within moments.
            try Integration.waitUntil("the sentinel no longer lists the subscription", seconds: 5) {
                try subscriptions(on: group.sentinels[subscribed]) == 0
            }
            await #expect(throws: RedisClientError(.shutDown, "")) { try await client.ping() }
        }

        /// Two empty slots of one primary moved to another; a request for
        /// the first meets `MOVED`, and the refresh it asks for is run by
        /// `run()` after the request's answer: the map then shows the second
        /// slot moved too, which no request touched.
        @Test(
            "Cluster under run(): the refresh a MOVED asks for runs in run(), and the map shows a moved slot no request touched; run() ends promptly, no connection left"
        )
        func clusterRefreshesUnderRun() async throws {
            let cluster = try RedisClusterGroup(primaries: 3, replicasEach: 0)
            defer { cluster.remove() }
            var configuration = try RedisClientConfiguration(url: cluster.url)
            configuration.operationTimeout = .seconds(1)
            let client = try RedisClient(configuration: configuration)
            guard case .cluster(let router) = client.route else {
                Issue.record("not a cluster route")
                return
            }
            let clock = ContinuousClock()
            /// Connections of clients on `port` other than this `CLIENT LIST`'s own (replicas and the bus are not `N`).
            func clients(on port: Int) throws -> Int {
                try Integration.redisCLI(["-p", String(port), "CLIENT", "LIST"]).split(separator: "\n")
                    .filter { $0.contains(" flags=N ") && !$0.contains("cmd=client|list") }.count
            }

            var bodyEnded = clock.now
            let primaries = try await whileRunning(client) { () async throws -> [Int] in
                let topology = try #require(try await client.clusterTopology())
                let (slotA, slotB) = (0, 1)
                let source = try #require(topology.primary(forSlot: slotA))
                #expect(topology.primary(forSlot: slotB) == source)
                let destination = try #require(topology.primaries.first { $0 != source })
                let destinationID = try cluster.id(port: destination.port)
                let others = topology.primaries.filter { $0 != destination }
                for slot in [slotA, slotB] {
                    for primary in [destination] + others {
                        try Integration.redisCLI(["-p", String(primary.port), "CLUSTER", "SETSLOT", String(slot), "NODE", destinationID])
                    }
                }
                let key = (0...).lazy.map { "service-test-\($0)" }.first { RedisHashSlot.slot(of: Array($0.utf8)) == slotA }!
                let (moved, reads) = (router.redirectsFollowed.moved, router.refreshCount)
                #expect(try await client.send(RESPCommand("SET", key, "1")) == .simpleString(Array("OK".utf8)))
                #expect(router.redirectsFollowed.moved == moved + 1, "the request met MOVED")
                // No request from here: the map changes only by run()'s refresh.
                try Integration.waitUntil("run() reads the map again", seconds: 20) { router.refreshCount > reads }
                let map = try #require(try await client.clusterTopology())
                #expect(map.primary(forSlot: slotB) == destination, "the refresh read the slot no request touched")
                bodyEnded = clock.now
                return topology.primaries.map(\.port)
            }
            let ending = (clock.now - bodyEnded).inMilliseconds
            #expect(ending < 5000, "run() ended \(Int(ending)) ms after it was cancelled")
            try Integration.waitUntil("no primary lists a connection of the client", seconds: 5) {
                try primaries.allSatisfy { try clients(on: $0) == 0 }
            }
            await #expect(throws: RedisClientError(.shutDown, "")) { try await client.ping() }
        }
    }
}
