@testable import EntitlementTokensRedis

/// Runs `body` while `client.run()` runs (its `Service.run()`, the only home
/// of its background work: Sentinel's poll and subscription, the Cluster
/// refresher), then ends `run()` by cancellation and waits for it: the client
/// is shut down when this returns (docs/DESIGN.md#the-redis-clients-state-machines).
func whileRunning<T>(_ client: RedisClient, _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await client.run() }
        do {
            let result = try await body()
            group.cancelAll()
            try await group.waitForAll()
            return result
        } catch {
            group.cancelAll()
            try? await group.waitForAll()
            throw error
        }
    }
}
