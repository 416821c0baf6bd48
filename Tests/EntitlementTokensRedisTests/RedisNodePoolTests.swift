import Foundation
import IntegrationSupport
import Testing

@testable import EntitlementTokensRedis

/// One node's pool against a real redis-server: whole after its first
/// connect, never larger than its size (docs/DESIGN.md#the-redis-clients-state-machines).
extension RedisIntegrationTests {
    @Suite("Redis: the node pool on a real server")
    struct RedisNodePoolTests {
        @Test("the first connect opens the rest of the pool before requests need it; 400 requests at once open no more")
        func opensWholeAndNoMore() async throws {
            try await withRedisServer { server in
                let admin = try adminClient(server.url)
                try await admin.ping()
                var configuration = try RedisClientConfiguration(url: server.url)
                configuration.maxConnections = 4
                configuration.operationTimeout = .seconds(5)
                let client = try RedisClient(configuration: configuration)
                try await client.ping()
                // The admin's pool (whole too) and the client's four, without another request sent.
                let whole = String(admin.configuration.maxConnections + 4)
                let clock = ContinuousClock()
                let start = clock.now
                var connected = try await admin.info("clients", field: "connected_clients")
                while connected != whole, clock.now - start < .seconds(5) {
                    try await Task.sleep(for: .milliseconds(10))
                    connected = try await admin.info("clients", field: "connected_clients")
                }
                #expect(connected == whole, "the pool did not open whole after its first connect")
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for _ in 0..<400 { tasks.addTask { try await client.ping() } }
                    try await tasks.waitForAll()
                }
                #expect(try await admin.info("clients", field: "connected_clients") == whole)
                await client.shutdown()
                await admin.shutdown()
            }
        }
    }
}
