// redis-ha-bench: `RedisReplayStore.accept` calls per second at a fixed
// number of concurrent tasks, against one Redis URL in any mode (standalone,
// redis-sentinel://, redis-cluster://), each call a fresh identity (so every
// call is a `SET … NX` that succeeds, plus `WAIT` with `replicated`).
// Benchmarks/redis-ha runs it against each mode in the same run and prints
// the ratios; it is not a test and never fails on a slow figure.
//
//   redis-ha-bench --url URL [--durability primary|replicated] [--tasks 64]
//                  [--seconds 5] [--timeout-ms 1000]
//
// Prints one line: calls_per_second=… p50_ms=… p99_ms=… calls=… unavailable=…
import EntitlementTokens
import EntitlementTokensRedis
import Foundation
import Synchronization

struct Options {
    var url = ""
    var durability = RedisDurability.primary
    var tasks = 64
    var seconds = 5.0
    var timeoutMilliseconds = 1000

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let value = rest.popFirst() else { throw Usage(message: "\(name) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--url": url = try value(argument)
            case "--durability":
                let text = try value(argument)
                guard let parsed = RedisDurability(rawValue: text) else { throw Usage(message: "--durability is primary or replicated") }
                durability = parsed
            case "--tasks":
                guard let count = Int(try value(argument)), (1...4096).contains(count) else { throw Usage(message: "--tasks is 1…4096") }
                tasks = count
            case "--seconds":
                guard let count = Double(try value(argument)), count > 0, count <= 600 else {
                    throw Usage(message: "--seconds is over 0, at most 600")
                }
                seconds = count
            case "--timeout-ms":
                guard let count = Int(try value(argument)), (1...60_000).contains(count) else { throw Usage(message: "--timeout-ms is 1…60000") }
                timeoutMilliseconds = count
            default: throw Usage(message: "unknown option \(argument.debugDescription)")
            }
        }
        guard !url.isEmpty else { throw Usage(message: "--url is required") }
    }
}

struct Usage: Error { let message: String }

/// A fresh 32-byte identity from a per-task generator (no two tasks share a seed).
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func identity() -> ReplayIdentity {
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: next()) { digest.append(contentsOf: $0) } }
        return ReplayIdentity(digest: digest)
    }
}

/// Shared by the measuring tasks: whether calls count yet, and whether to stop.
final class Flags: Sendable {
    let measuring = Atomic<Bool>(false)
    let stopping = Atomic<Bool>(false)
}

func milliseconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
}

func run(_ options: Options) async throws -> String {
    let store = try RedisReplayStore(
        url: options.url,
        timeout: .milliseconds(options.timeoutMilliseconds),
        durability: options.durability
    )
    // The client's run() carries Sentinel's poll and subscription (a Sentinel
    // store decides nothing without it); cancelled, it shuts the client down.
    return try await withThrowingTaskGroup(of: Void.self) { service in
        service.addTask { try await store.client.run() }
        defer { service.cancelAll() }
        return try await measure(store, options)
    }
}

func measure(_ store: RedisReplayStore, _ options: Options) async throws -> String {
    let started = ContinuousClock.now
    while true {
        if store.client.notFollowingSwitchovers == nil, await store.ping() { break }
        guard ContinuousClock.now - started < .seconds(10) else { throw Usage(message: "the store did not answer within 10 s") }
        try await Task.sleep(for: .milliseconds(20))
    }
    let now = TokenTimestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))!
    let until = TokenTimestamp(millisecondsSince1970: now.millisecondsSince1970 + 600_000)!
    let seed = UInt64(UInt32(bitPattern: ProcessInfo.processInfo.processIdentifier)) << 32 ^ UInt64(bitPattern: now.millisecondsSince1970)
    let flags = Flags()
    // Half a second unmeasured (connections opened, topology learned), then the measured span.
    let results = await withTaskGroup(of: (latencies: [Double], unavailable: Int).self) { tasks in
        for task in 0..<options.tasks {
            tasks.addTask {
                var generator = SplitMix64(state: seed &+ UInt64(task) &* 0x1_0000_0001)
                var latencies: [Double] = []
                latencies.reserveCapacity(1 << 14)
                var unavailable = 0
                while !flags.stopping.load(ordering: .relaxed) {
                    let identity = generator.identity()
                    let begin = ContinuousClock.now
                    let decision = await store.accept(identity, until: until, now: now)
                    guard flags.measuring.load(ordering: .relaxed) else { continue }
                    latencies.append(milliseconds(ContinuousClock.now - begin))
                    if decision != .accepted { unavailable += 1 }
                }
                return (latencies, unavailable)
            }
        }
        try? await Task.sleep(for: .milliseconds(500))
        flags.measuring.store(true, ordering: .relaxed)
        let begin = ContinuousClock.now
        try? await Task.sleep(for: .milliseconds(Int(options.seconds * 1000)))
        flags.measuring.store(false, ordering: .relaxed)
        let span = milliseconds(ContinuousClock.now - begin) / 1000
        flags.stopping.store(true, ordering: .relaxed)
        var all: [Double] = []
        var unavailable = 0
        for await result in tasks {
            all += result.latencies
            unavailable += result.unavailable
        }
        return (all.sorted(), unavailable, span)
    }
    let (latencies, unavailable, span) = results
    guard !latencies.isEmpty else { throw Usage(message: "no call finished in the measured span") }
    func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
    return String(
        format: "calls_per_second=%.0f p50_ms=%.3f p99_ms=%.3f calls=%d unavailable=%d",
        Double(latencies.count) / span,
        percentile(0.50),
        percentile(0.99),
        latencies.count,
        unavailable
    )
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    print(try await run(options))
} catch let usage as Usage {
    FileHandle.standardError.write(Data("redis-ha-bench: \(usage.message)\n".utf8))
    exit(64)
} catch {
    FileHandle.standardError.write(Data("redis-ha-bench: \(error)\n".utf8))
    exit(1)
}
