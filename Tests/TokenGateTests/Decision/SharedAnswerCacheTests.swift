import Synchronization
import Testing

@testable import TokenGate

/// The manifest route's shared origin answers (docs/DESIGN.md#the-manifest-route):
/// one load per key however many viewers ask at once, a lifetime, and a
/// bound in bytes however many keys.
struct SharedAnswerCacheTests {
    final class Loads: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func concurrentMissesOfOneKeyShareOneLoad() async {
        let cache = SharedAnswerCache<Int>(maximumBytes: 1 << 20)
        let loads = Loads()
        let values = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await cache.value(for: "/live/tnt/index.m3u8") {
                        loads.count.add(1, ordering: .relaxed)
                        try? await Task.sleep(for: .milliseconds(200))
                        return .init(value: 7, lifetime: .seconds(1), cost: 100)
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(values == Array(repeating: 7, count: 50))
        #expect(loads.count.load(ordering: .relaxed) == 1)
        #expect(cache.count == 1)
        #expect(cache.bytes == 100)
    }

    @Test func anAnswerIsSharedForItsLifetimeAndOneWithoutIsNotKept() async throws {
        let cache = SharedAnswerCache<Int>(maximumBytes: 1 << 20)
        let loads = Loads()
        @Sendable func load(_ lifetime: Duration) -> @Sendable () async -> SharedAnswerCache<Int>.Loaded {
            {
                let n = loads.count.add(1, ordering: .relaxed).newValue
                return .init(value: n, lifetime: lifetime, cost: 10)
            }
        }
        #expect(await cache.value(for: "a", load: load(.milliseconds(300))) == 1)
        #expect(await cache.value(for: "a", load: load(.milliseconds(300))) == 1)
        try await Task.sleep(for: .milliseconds(400))
        #expect(await cache.value(for: "a", load: load(.milliseconds(300))) == 2)
        // No lifetime (an origin's no-store, a failure): shared only with those already waiting.
        #expect(await cache.value(for: "b", load: load(.zero)) == 3)
        #expect(await cache.value(for: "b", load: load(.zero)) == 4)
        #expect(cache.count == 1)
    }

    @Test func tenThousandDistinctKeysStayWithinTheByteBound() async {
        let bound = 256 * 1024
        let cache = SharedAnswerCache<[UInt8]>(maximumBytes: bound)
        for index in 0..<10_000 {
            let size = 100 + (index % 7) * 300
            _ = await cache.value(for: "/vod/title-\(index)/index.m3u8") {
                .init(value: [UInt8](repeating: 0x23, count: size), lifetime: .seconds(3600), cost: size)
            }
            #expect(cache.bytes <= bound)
        }
        #expect(cache.count < 10_000)
        #expect(cache.bytes > bound / 2, "the cache evicted far more than it had to")
        // The newest answers are the ones kept.
        let loads = Loads()
        _ = await cache.value(for: "/vod/title-9999/index.m3u8") {
            loads.count.add(1, ordering: .relaxed)
            return .init(value: [], lifetime: .seconds(1), cost: 1)
        }
        #expect(loads.count.load(ordering: .relaxed) == 0)
        // One answer larger than the whole bound is served, never kept.
        let huge = await cache.value(for: "huge") { .init(value: [UInt8](repeating: 1, count: 10), lifetime: .seconds(60), cost: bound + 1) }
        #expect(huge.count == 10)
        #expect(cache.bytes <= bound)
    }
}
