// replay-store-pauses: how long the in-memory replay store stops a request while it grows.
//
//   replay-store-pauses [--entries N]
//
// A hash table grows by rehashing every entry it holds, and the store does it
// under a lock every request waits on. This inserts N distinct identities into
// an InMemoryReplayStore of the default capacity, as a gate accepts N media
// tokens, timing each accept; and, as the baseline in the same run, the same
// keys into one table (a Dictionary of the store's 16-byte keys and an array
// beside it for their expiries, as the store was before it was sharded).
// Prints the worst single insert of each and their ratio
// (docs/PERFORMANCE.md#the-replay-stores-growth-and-the-gates-p99-2026-11-28).
import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

var entries = 400_000
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    guard argument == "--entries", let value = arguments.next().flatMap(Int.init), value > 0 else {
        print("usage: replay-store-pauses [--entries N]")
        exit(64)
    }
    entries = value
}

/// SplitMix64: 32-byte digests as evenly spread as SHA-256's, made before timing.
func digest(_ number: Int) -> [UInt8] {
    var state = UInt64(number) &* 0x9E37_79B9_7F4A_7C15
    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    for _ in 0..<4 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var mixed = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        withUnsafeBytes(of: mixed.bigEndian) { bytes.append(contentsOf: $0) }
    }
    return bytes
}

struct Key: Hashable {
    let high: UInt64
    let low: UInt64
}

struct Summary {
    var durations: [UInt64]

    var worst: Double { Double(durations.max() ?? 0) / 1e6 }
    func percentile(_ fraction: Double) -> Double {
        let sorted = durations.sorted()
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1e6
    }
    /// Time spent in inserts that took longer than a millisecond: a request stopped.
    var overOneMillisecond: Double { Double(durations.filter { $0 > 1_000_000 }.reduce(0, +)) / 1e6 }
}

let digests = (0..<entries).map(digest)
let now = TokenTimestamp.now()
let until = now.adding(milliseconds: 420_000)!

var oneTable: [Key: Int64] = [:]
var expiries: [(Int64, Key)] = []
var baseline = Summary(durations: [])
baseline.durations.reserveCapacity(entries)
for bytes in digests {
    let key = bytes.withUnsafeBytes { Key(high: $0.load(as: UInt64.self), low: $0.load(fromByteOffset: 8, as: UInt64.self)) }
    let start = monotonicNanoseconds()
    oneTable[key] = until.millisecondsSince1970
    expiries.append((until.millisecondsSince1970, key))
    baseline.durations.append(monotonicNanoseconds() - start)
}

let store = InMemoryReplayStore()
var sharded = Summary(durations: [])
sharded.durations.reserveCapacity(entries)
var refused = 0
for bytes in digests {
    let identity = ReplayIdentity(digest: bytes)
    let start = monotonicNanoseconds()
    let decision = store.acceptWithoutWaiting(identity, until: until, now: now)
    sharded.durations.append(monotonicNanoseconds() - start)
    if decision != .accepted { refused += 1 }
}
guard refused == 0, store.count == entries || store.count == store.capacity else {
    print("replay-store-pauses: the store refused \(refused) fresh identities or lost some (\(store.count) kept)")
    exit(1)
}

func line(_ name: String, _ summary: Summary) {
    print(
        padded(name)
            + "worst \(format(summary.worst)) ms  p99.99 \(format(summary.percentile(0.9999))) ms"
            + "  in inserts over 1 ms: \(format(summary.overOneMillisecond)) ms"
    )
}
func padded(_ text: String) -> String { text + String(repeating: " ", count: max(0, 34 - text.count)) }
func format(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}

print("\(entries) distinct identities, one thread")
line("one table (the baseline)", baseline)
line("InMemoryReplayStore (sharded)", sharded)
let ratio = sharded.worst / max(baseline.worst, 1e-6)
print(
    padded("worst insert, store / one table")
        + "\(format(ratio))  (target <= 0.25) \(ratio <= 0.25 ? "met" : "MISSED")"
)
