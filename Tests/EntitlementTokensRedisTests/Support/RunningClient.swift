@testable import EntitlementTokensRedis

/// Runs `body` while `client.run()` runs (its `Service.run()`, the only home
/// of its background work: Sentinel's poll and subscription, the Cluster
/// refresher), then ends `run()` by cancellation and waits for it: the client
/// is shut down when this returns (docs/DESIGN.md#the-redis-clients-state-machines).
/// Waits (up to 5 s) until `run()` has started, so that a Sentinel store decides.
func whileRunning<T>(_ clients: RedisClient..., body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for client in clients { group.addTask { try await client.run() } }
        try await waitUntilRunning(clients)
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

/// The same for a test whose body does not fit one closure: each client's
/// `run()` in a task of its own from `init` (which returns once they run)
/// until ``stop()``, which cancels and awaits them.
final class RunningClients: Sendable {
    private let runs: [Task<Void, Never>]

    init(_ clients: [RedisClient]) async throws {
        runs = clients.map { client in Task { try? await client.run() } }
        try await waitUntilRunning(clients)
    }

    func stop() async {
        for run in runs { run.cancel() }
        for run in runs { await run.value }
    }
}

/// Waits (up to 5 s) until every client's `run()` has started: a Sentinel store decides only then.
private func waitUntilRunning(_ clients: [RedisClient]) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    while clients.contains(where: { $0.notFollowingSwitchovers != nil }), clock.now - start < .seconds(5) {
        try await Task.sleep(for: .milliseconds(1))
    }
}
