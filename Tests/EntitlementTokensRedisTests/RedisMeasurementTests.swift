import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// Figures docs/REDIS.md quotes, measured on a real server each run: the
/// memory one replay entry costs, and one store's rate with 64 tasks.
extension RedisIntegrationTests {
    @Suite("Redis: measurements")
    struct RedisMeasurementTests {
        @Test("one replay entry costs 60–250 bytes of Redis memory (INFO memory; about 180 on Redis 7.0)")
        func memoryPerKey() async throws {
            try await withRedisServer { server in
                let store = try makeStore(server.url, timeout: .seconds(2))
                let admin = try adminClient(server.url)
                let before = try #require(Int(try await admin.info("memory", field: "used_memory") ?? ""))
                let count = 20_000
                var generator = SeededGenerator(seed: 13)
                let identities = (0..<count).map { _ in randomIdentity(using: &generator) }
                let until = timestamp(plus: 600_000)
                await withTaskGroup(of: Void.self) { group in
                    for lane in 0..<16 {
                        group.addTask {
                            for index in stride(from: lane, to: count, by: 16) {
                                _ = await store.accept(identities[index], until: until, now: timestamp())
                            }
                        }
                    }
                }
                #expect(try await admin.integer("DBSIZE") == Int64(count))
                let after = try #require(Int(try await admin.info("memory", field: "used_memory") ?? ""))
                let perKey = Double(after - before) / Double(count)
                print(
                    "Redis memory per replay entry (prefix \"\(RedisReplayStore.defaultKeyPrefix)\", 43-character id, PX): \(String(format: "%.1f", perKey)) bytes"
                )
                #expect(perKey > 60 && perKey < 250, "\(perKey) bytes per key")
                await store.shutdown()
                await admin.shutdown()
            }
        }

        @Test("one store, 64 concurrent tasks, loopback: accept calls per second")
        func throughput() async throws {
            try await withRedisServer { server in
                let store = try makeStore(server.url, timeout: .seconds(2))
                let perTask = 1_000
                let tasks = 64
                var generator = SeededGenerator(seed: 15)
                let identities = (0..<(perTask * tasks)).map { _ in randomIdentity(using: &generator) }
                let until = timestamp(plus: 600_000)
                let now = timestamp()
                _ = await store.accept(randomIdentity(using: &generator), until: until, now: now)  // connect first
                let (accepted, elapsed) = await milliseconds {
                    await withTaskGroup(of: Int.self) { group in
                        for task in 0..<tasks {
                            group.addTask {
                                var accepted = 0
                                for index in (task * perTask)..<((task + 1) * perTask)
                                where await store.accept(identities[index], until: until, now: now) == .accepted {
                                    accepted += 1
                                }
                                return accepted
                            }
                        }
                        return await group.reduce(0, +)
                    }
                }
                let rate = Double(identities.count) / (elapsed / 1000)
                print(
                    "RedisReplayStore.accept, 64 tasks, one store (2 connections), loopback: \(Int(rate)) calls/s (\(identities.count) in \(Int(elapsed)) ms)"
                )
                #expect(accepted == identities.count)
                await store.shutdown()
            }
        }
    }
}
