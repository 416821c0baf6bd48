import EntitlementTokens
import Foundation
import RedisRESP
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

func randomIdentity<G: RandomNumberGenerator>(using generator: inout G) -> ReplayIdentity {
    ReplayIdentity(digest: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

func timestamp(_ date: Date = Date(), plus milliseconds: Int64 = 0) -> TokenTimestamp {
    TokenTimestamp(millisecondsSince1970: Int64(date.timeIntervalSince1970 * 1000) + milliseconds)!
}

/// A store on `url` with `timeout` and the other settings given. The
/// default timeout is generous: tests about deadlines give 50 ms themselves.
func makeStore(
    _ url: String,
    timeout: Duration = .seconds(1),
    prefix: String = RedisReplayStore.defaultKeyPrefix,
    trustedCAFile: String? = nil,
    clockSkew: Duration = RedisReplayStore.defaultClockSkew,
    configure: (inout RedisClientConfiguration) -> Void = { _ in }
) throws -> RedisReplayStore {
    var configuration = try RedisClientConfiguration(url: url, trustedCAFile: trustedCAFile)
    configuration.operationTimeout = timeout
    configure(&configuration)
    return RedisReplayStore(client: try RedisClient(configuration: configuration), keyPrefix: prefix, clockSkew: clockSkew)
}

/// An administrative client for reading back what the store wrote.
func adminClient(_ url: String) throws -> RedisClient {
    var configuration = try RedisClientConfiguration(url: url)
    configuration.operationTimeout = .seconds(5)
    return try RedisClient(configuration: configuration)
}

extension RedisClient {
    func command(_ arguments: String...) async throws -> RESPReply {
        try await send(RESPCommand(arguments.map { Array($0.utf8) }))
    }

    func integer(_ arguments: String...) async throws -> Int64? {
        if case .integer(let value) = try await send(RESPCommand(arguments.map { Array($0.utf8) })) { return value }
        return nil
    }

    /// One field of `INFO section`.
    func info(_ section: String, field: String) async throws -> String? {
        guard case .bulkString(let bytes) = try await command("INFO", section) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0] == field { return String(parts[1]) }
        }
        return nil
    }
}

/// The Cluster hash slot of `identity`'s replay key under the default prefix.
func clusterSlot(_ identity: ReplayIdentity) -> Int {
    RedisHashSlot.slot(of: ReplayKey.bytes(prefix: Array(RedisReplayStore.defaultKeyPrefix.utf8), identity: identity))
}

/// A fresh identity whose replay key lands in `slot`.
func identity(inSlot slot: Int, using generator: inout SeededGenerator) -> ReplayIdentity {
    while true {
        let candidate = randomIdentity(using: &generator)
        if clusterSlot(candidate) == slot { return candidate }
    }
}

/// Opens each store's connections to the shards of a 3-primary cluster (slots 0,
/// 8000 and 16000), one request at a time, and returns how many keys that wrote.
/// An exactly-once check starts warm: on a loaded machine the first connection to
/// a node, opened by 4 tasks at once, outlasted a 1 s deadline (2026-11-27), and
/// once even alone (2026-11-28), and a cold connect is not what those tests check.
/// So a key is asked again until the store decides, and lands exactly once.
func connectToEveryShard(
    _ stores: [RedisReplayStore],
    until: TokenTimestamp,
    using generator: inout SeededGenerator,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) async -> Int {
    var written = 0
    for store in stores {
        for slot in [0, 8_000, 16_000] {
            let identity = identity(inSlot: slot, using: &generator)
            var decision = ReplayDecision.unavailable("not asked")
            for _ in 0..<10 where decision.isUnavailable {
                decision = await store.accept(identity, until: until, now: timestamp())
            }
            #expect(!decision.isUnavailable, "connecting to slot \(slot)'s shard: \(decision)", sourceLocation: sourceLocation)
            written += 1
        }
    }
    return written
}

/// Exactly once, as a fleet sees it: 4 tasks present every identity, the
/// tasks spread over `stores` (two clients, two discoveries); each identity
/// must be accepted once and replayed three times.
func expectEachAcceptedOnce(
    _ identities: [ReplayIdentity],
    through stores: [RedisReplayStore],
    until: TokenTimestamp,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) async {
    let decisions = await withTaskGroup(of: [ReplayDecision].self) { tasks in
        for task in 0..<4 {
            tasks.addTask {
                var result: [ReplayDecision] = []
                for identity in identities { result.append(await stores[task % stores.count].accept(identity, until: until, now: timestamp())) }
                return result
            }
        }
        return await tasks.reduce(into: []) { $0.append($1) }
    }
    for index in identities.indices {
        let outcomes = decisions.map { $0[index] }
        #expect(
            outcomes.filter { $0 == .accepted }.count == 1 && outcomes.filter { $0 == .replayed }.count == 3,
            "identity \(index): \(outcomes)",
            sourceLocation: sourceLocation
        )
    }
}

/// How long `body` took, in milliseconds.
func milliseconds<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    let clock = ContinuousClock()
    let start = clock.now
    let value = try await body()
    let elapsed = clock.now - start
    return (value, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
}

extension ReplayDecision {
    var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }

    var reason: String {
        if case .unavailable(let reason) = self { return reason }
        return ""
    }
}

extension RedisReplayStore {
    /// Waits until Redis answers (connections open), at most `limit`.
    func warmUp(limit: Duration = .seconds(2)) async {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit, !(await ping()) {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Why ``checkHealth()`` fails, or nil when Redis answers.
    func healthFailure() async -> RedisClientError? {
        do throws(RedisClientError) {
            try await checkHealth()
            return nil
        } catch {
            return error
        }
    }
}
