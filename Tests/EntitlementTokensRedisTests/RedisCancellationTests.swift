import EntitlementTokens
import Foundation
import IntegrationSupport
import RedisRESP
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// Issue 22 item 2 on a real server: the caller's deadline is the one
/// deadline, and a cancelled caller stops waiting at once.
extension RedisIntegrationTests {
    @Suite("Redis: one deadline and cancellation")
    struct RedisCancellationTests {
        @Test("the sooner of the caller's and the store's deadline holds; a cancelled caller is answered at once")
        func oneDeadlineAndCancellation() async throws {
            try await withRedisServer { server in
                // A store deadline far beyond anything this test waits for.
                let store = try makeStore(server.url, timeout: .seconds(20))
                await store.warmUp()
                var generator = SeededGenerator(seed: 22)
                #expect(
                    await store.accept(
                        randomIdentity(using: &generator),
                        until: timestamp(plus: 60_000),
                        now: timestamp(),
                        within: .milliseconds(500)
                    ) == .accepted
                )
                server.pause()
                let identity = randomIdentity(using: &generator)
                let (decision, elapsed) = await milliseconds {
                    await store.accept(identity, until: timestamp(plus: 60_000), now: timestamp(), within: .milliseconds(50))
                }
                #expect(decision.isUnavailable && decision.reason.contains("timedOut"), "\(decision)")
                #expect(elapsed < 5000, "the caller's 50 ms, not the store's 20 s: \(elapsed) ms")

                let another = randomIdentity(using: &generator)
                let waiting = Task {
                    await store.accept(another, until: timestamp(plus: 60_000), now: timestamp())
                }
                try await Task.sleep(for: .milliseconds(100))
                let cancelledAt = ContinuousClock.now
                waiting.cancel()
                let cancelled = await waiting.value
                let afterCancel = ContinuousClock.now - cancelledAt
                #expect(cancelled.isUnavailable && cancelled.reason.contains("cancelled"), "\(cancelled)")
                #expect(afterCancel < .seconds(5), "answered \(afterCancel) after the cancellation, not at the store's 20 s deadline")
                server.resume()
                // The connection is still usable: the cancelled request's late reply met its own place.
                var accepted = false
                for _ in 0..<100 where !accepted {
                    accepted =
                        await store.accept(
                            randomIdentity(using: &generator),
                            until: timestamp(plus: 60_000),
                            now: timestamp(),
                            within: .milliseconds(500)
                        ) == .accepted
                }
                #expect(accepted)
                await store.shutdown()
            }
        }
    }
}
