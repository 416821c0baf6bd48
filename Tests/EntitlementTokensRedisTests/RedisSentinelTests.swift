import IntegrationSupport
import EntitlementTokens
@testable import EntitlementTokensRedis
import Foundation
import RedisRESP
import Synchronization
import Testing

/// Sentinel mode against real processes: one primary, two replicas, three
/// sentinels (SPEC §10 "High availability").
extension RedisIntegrationTests {
    @Suite("Redis: Sentinel", .enabled(if: Integration.redisHighAvailability, "redis-sentinel or redis-cli not installed"))
    struct RedisSentinelTests {
        /// One decision, when it was made (ms since the kill, negative before).
        struct Attempt: Sendable {
            let identity: Int
            let decision: ReplayDecision
            let at: Double
        }

        @Test("exactly once; kill -9 of the primary: the store follows the new primary, unavailable only in the failover window; the old primary back as a replica: nothing accepted twice")
        func failover() async throws {
            let group = try RedisSentinelGroup(dataPassword: "data-pw", sentinelPassword: "sentinel-pw")
            defer { group.remove() }
            let directory = group.primary.directory
            let sentinelPasswordFile = directory.appendingPathComponent("sentinel-password").path
            try "sentinel-pw\n".write(toFile: sentinelPasswordFile, atomically: true, encoding: .utf8)
            let url = "redis-sentinel://:data-pw@" + group.sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
                + "?sentinel-password-file=\(sentinelPasswordFile)#\(group.primaryName)"
            let until = timestamp(plus: 600_000)

            // Exactly once through two stores (two clients, two discoveries).
            let stores = try (0..<2).map { _ in try RedisReplayStore(url: url, timeout: .seconds(1)) }
            var generator = SplitMix64(seed: 21)
            let warm = (0..<400).map { _ in randomIdentity(using: &generator) }
            await expectEachAcceptedOnce(warm, through: stores, until: until)
            guard case .sentinel(let router) = stores[0].client.route else { Issue.record("not a sentinel route"); return }
            #expect(router.currentPrimary?.port == group.primary.port)

            // Under load (4 tasks, fresh identities, 200 ms deadline), kill -9 the primary.
            let store = try RedisReplayStore(url: url, timeout: .milliseconds(200))
            await store.warmUp()
            let clock = ContinuousClock()
            let shared = LoadState()
            let identities = (0..<200_000).map { _ in randomIdentity(using: &generator) }
            let load = Task {
                await withTaskGroup(of: [Attempt].self) { tasks in
                    for _ in 0..<4 {
                        tasks.addTask {
                            var attempts: [Attempt] = []
                            while !shared.stop.load(ordering: .relaxed) {
                                let index = shared.counter.add(1, ordering: .relaxed).newValue - 1
                                guard index < identities.count else { break }
                                let decision = await store.accept(identities[index], until: until, now: timestamp())
                                let now = clock.now
                                let at = shared.killedAt.withLock { kill in kill.map { (now - $0).inMilliseconds } } ?? -1
                                attempts.append(Attempt(identity: index, decision: decision, at: at))
                                if decision.isUnavailable { try? await Task.sleep(for: .milliseconds(5)) }
                            }
                            return attempts
                        }
                    }
                    return await tasks.reduce(into: []) { $0 += $1 }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            let oldPrimaryPort = group.primary.port
            // The moment is taken before the signal: stop() then waits for the process to be reaped, and
            // requests that fail in that wait belong after the kill, not before it.
            shared.killedAt.withLock { $0 = clock.now }
            group.primary.stop()  // SIGKILL
            // Detection: the first moment a sentinel names another primary.
            var detectedAt: Double?
            while detectedAt == nil, clock.now - shared.killedAt.withLock({ $0! }) < .seconds(20) {
                for sentinel in group.sentinels {
                    if let port = try? group.primaryPort(accordingTo: sentinel, sentinelPassword: "sentinel-pw"), port != oldPrimaryPort {
                        detectedAt = (clock.now - shared.killedAt.withLock { $0! }).inMilliseconds
                    }
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let detection = try #require(detectedAt, "no sentinel named a new primary within 20 s")
            try await Task.sleep(for: .seconds(2))
            shared.stop.store(true, ordering: .relaxed)
            let attempts = await load.value

            let afterKill = attempts.filter { $0.at >= 0 }
            let unavailable = afterKill.filter { $0.decision.isUnavailable }
            let lastUnavailable = unavailable.map(\.at).max() ?? 0
            let acceptedAfter = afterKill.filter { $0.decision == .accepted && $0.at > lastUnavailable }
            print("sentinel failover: detection \(Int(detection)) ms after the kill; \(unavailable.count) unavailable, the last at \(Int(lastUnavailable)) ms; \(acceptedAfter.count) accepted after; \(attempts.count) attempts in all")
            // Before the kill every fresh token is accepted (the few in flight at the kill may be decided after it).
            let refusedBefore = attempts.filter { $0.at < 0 && $0.decision != .accepted }
            #expect(refusedBefore.count <= 4, "\(refusedBefore.map(\.decision))")
            #expect(lastUnavailable <= detection + 1000, "503s at most detection + 1 s: the last at \(lastUnavailable) ms, detection \(detection) ms")
            #expect(!acceptedAfter.isEmpty, "the store follows the new primary without a restart")
            #expect(router.currentPrimary != nil)
            guard case .sentinel(let loadRouter) = store.client.route else { return }
            #expect(loadRouter.currentPrimary?.port != oldPrimaryPort)
            #expect(group.replicas.contains { $0.port == loadRouter.currentPrimary?.port })
            let wrongAnswers = attempts.filter { $0.decision == .replayed }
            #expect(wrongAnswers.isEmpty, "a fresh token is never replayed: \(wrongAnswers.count)")

            // The old primary back (empty: no persistence): the sentinels make it a replica.
            try group.primary.restart()
            try Integration.waitUntil("the old primary is a replica again", seconds: 30) {
                try Integration.redisCLI(["-p", String(oldPrimaryPort), "-a", "data-pw", "--no-auth-warning", "ROLE"]).hasPrefix("slave")
            }
            for store in stores { await store.warmUp(limit: .seconds(5)) }
            // Every token accepted before, during or after the failover: replayed now (primary durability may
            // have lost the last writes before the kill — counted, SPEC §10).
            let accepted = attempts.filter { $0.decision == .accepted }
            var doubleAllows = 0
            for attempt in accepted {
                let again = await stores[0].accept(identities[attempt.identity], until: until, now: timestamp())
                if again == .accepted { doubleAllows += 1 }
                #expect(!again.isUnavailable)
            }
            for identity in warm {
                #expect(await stores[1].accept(identity, until: until, now: timestamp()) == .replayed)
            }
            print("sentinel failover (primary durability): \(doubleAllows) double allows of \(accepted.count) accepted tokens")
            // More than that means a second failover (or a lost sync): the sentinels' own account of the run says which.
            let switches = group.sentinels.flatMap { $0.log.split(separator: "\n").filter { $0.contains("+switch-master") || $0.contains("+failover-end") || $0.contains("+sdown master") } }
            #expect(doubleAllows <= 100, "only writes not yet replicated at the kill can be lost: \(doubleAllows); the sentinels logged:\n\(switches.joined(separator: "\n"))")
            for store in stores + [store] { await store.shutdown() }
        }

        @Test("a wrong sentinel password or an unknown primary name: a clear reason, never the password")
        func refusals() async throws {
            let group = try RedisSentinelGroup(replicaCount: 0, sentinelCount: 1, sentinelPassword: "sentinel-pw")
            defer { group.remove() }
            let sentinel = "127.0.0.1:\(group.sentinels[0].port)"
            let wrong = try RedisReplayStore(url: "redis-sentinel://\(sentinel)?sentinel-password=hunter2#mymaster", timeout: .milliseconds(500))
            let failure = try #require(await wrong.healthFailure())
            #expect(failure.message.contains("mymaster") && !failure.message.contains("hunter2"), "\(failure)")
            #expect(failure.code == .authenticationFailed, "a wrong sentinel password is a setting to fix: \(failure)")
            #expect(await wrong.accept(ReplayIdentity(digest: Array(repeating: 1, count: 32)), until: timestamp(plus: 60_000), now: timestamp()).isUnavailable)
            let unknown = try RedisReplayStore(url: "redis-sentinel://\(sentinel)?sentinel-password=sentinel-pw#nosuch", timeout: .milliseconds(500))
            let unknownFailure = try #require(await unknown.healthFailure())
            #expect(unknownFailure.message.contains("no primary named 'nosuch'"), "\(unknownFailure)")
            let right = try RedisReplayStore(url: "redis-sentinel://\(sentinel)?sentinel-password=sentinel-pw#mymaster", timeout: .seconds(1))
            #expect(await right.healthFailure() == nil)
            try await right.checkWriteAccess()
            for store in [wrong, unknown, right] { await store.shutdown() }
        }
    }
}

/// What a load's tasks share: when the primary died, when to stop, the next identity.
final class LoadState: Sendable {
    let killedAt = Mutex<ContinuousClock.Instant?>(nil)
    let stop = Atomic<Bool>(false)
    let counter = Atomic<Int>(0)
}

extension Duration {
    var inMilliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
