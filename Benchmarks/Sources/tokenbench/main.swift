// tokenbench: the Swift side of Benchmarks/run.
//
//   tokenbench parse  --corpus FILE [--threads N] [--seconds S] [--warmup S]
//   tokenbench verify --corpus FILE --key PEM --now TIME [--replay-check] [--threads N] [--seconds S] [--warmup S]
//
// `parse`  = transport decode + framing + libxml2 parse + typed token (no signature).
// `verify` = decode + parse + signature + the policy the vendor's Java verifier
//            applies (expiry, requestor), through the public `TokenVerifier`.
//            `--replay-check` adds what a server adds for a media token: the
//            replay check, against a store that accepts every token (the
//            verifier's side of the check, not a store's cost).
// The corpus is one encoded token per line (the same file every baseline reads).
// Every token is checked once before timing (it must decode / be VALID_TOKEN),
// then each thread loops over the corpus until the deadline. The last line is
//   RESULT <tokens per second> <tokens> <seconds>
import EntitlementTokens
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var mode = ""
    var corpus = ""
    var key: String?
    var now: String?
    var requestor = "TNT"
    var threads = 1
    var seconds = 3.0
    var warmup = 0.5
    /// Exactly this many tokens on one thread, untimed (for callgrind).
    var count: Int?
    /// Ask a replay store about every media token (it accepts each).
    var replayCheck = false

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        mode = iterator.next() ?? ""
        while let argument = iterator.next() {
            if argument == "--replay-check" {
                replayCheck = true
                continue
            }
            let value = iterator.next() ?? ""
            switch argument {
            case "--corpus": corpus = value
            case "--key": key = value
            case "--now": now = value
            case "--requestor": requestor = value
            case "--threads": threads = Int(value) ?? 1
            case "--seconds": seconds = Double(value) ?? 3
            case "--warmup": warmup = Double(value) ?? 0.5
            case "--count": count = Int(value)
            default: fail("unknown option \(argument)")
            }
        }
        guard ["parse", "verify"].contains(mode), !corpus.isEmpty else {
            fail("usage: tokenbench parse|verify --corpus FILE [--key PEM --now TIME] [--replay-check] [--threads N] [--seconds S] [--warmup S]")
        }
    }
}

func fail(_ message: String) -> Never {
    let line = "tokenbench: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func readLines(_ path: String) -> [[UInt8]] {
    guard let file = fopen(path, "rb") else { fail("cannot read \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes.split(separator: UInt8(ascii: "\n")).map { Array($0) }.filter { !$0.isEmpty }
}

let options = Options(CommandLine.arguments)
let tokens = readLines(options.corpus)
guard !tokens.isEmpty else { fail("\(options.corpus) holds no token") }

/// One unit of work per token; returns false when the token did not pass.
let work: @Sendable () -> (@Sendable ([UInt8]) -> Bool)
switch options.mode {
case "parse":
    work = {
        // One decoder per thread, kept: that is how the library is meant to be used.
        nonisolated(unsafe) let decoder = TokenDecoder()
        return { record in (try? decoder.decode(record)) != nil }
    }
default:
    guard let keyPath = options.key, let nowText = options.now else { fail("verify needs --key and --now") }
    let ring: KeyRing
    do { ring = try KeyRing.load(paths: [keyPath]) } catch { fail("\(error)") }
    let now: TokenTimestamp
    do { now = try TokenDateParser.parse(nowText).timestamp } catch { fail("--now: \(error)") }
    // Shared by every thread, as a server would share it.
    let verifier = TokenVerifier(
        signature: .trustedKeys(ring),
        policy: VerificationPolicy(
            requestorID: options.requestor,
            replayStore: options.replayCheck ? AcceptingStore() : nil,
            clock: { now }
        )
    )
    work = { { record in verifier.verify(record).isValid } }
}

// Check every token once, untimed: a benchmark of failures measures nothing.
do {
    let check = work()
    for (index, token) in tokens.enumerated() where !check(token) {
        fail("token \(index + 1) of \(options.corpus) does not pass \(options.mode)")
    }
}

let counts = Mutex<[Int]>([])
let start = Atomic<Int>(0)
let threads = max(1, options.threads)

func runThread(_ deadline: Double, record: Bool) {
    let step = work()
    var done = 0
    var index = 0
    while true {
        // Check the clock every 64 tokens: cheap against a ~20 µs token.
        for _ in 0..<64 {
            _ = step(tokens[index])
            index += 1
            if index == tokens.count { index = 0 }
        }
        done += 64
        if monotonicSeconds() >= deadline { break }
    }
    if record { counts.withLock { $0.append(done) } }
}

func runAll(seconds: Double, record: Bool) -> Double {
    let began = monotonicSeconds()
    let deadline = began + seconds
    var handles: [pthread_t] = []
    for _ in 1..<threads {
        var handle = pthread_t()
        let box = Unmanaged.passRetained(ThreadBox { runThread(deadline, record: record) })
        guard
            pthread_create(
                &handle,
                nil,
                { raw in
                    let box = Unmanaged<ThreadBox>.fromOpaque(raw!).takeRetainedValue()
                    box.body()
                    return nil
                },
                box.toOpaque()
            ) == 0
        else { fail("pthread_create failed") }
        handles.append(handle)
    }
    runThread(deadline, record: record)
    for handle in handles { pthread_join(handle, nil) }
    return monotonicSeconds() - began
}

/// Accepts every token, remembering none: a corpus looped over stays valid,
/// and what is counted is the verifier's side of the replay check.
struct AcceptingStore: ReplayStore {
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision { .accepted }
    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? { .accepted }
}

final class ThreadBox: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A fixed amount of work, for `valgrind --tool=callgrind --toggle-collect='*countedLoop*'`:
/// instruction counts per token, repeatable on a noisy machine.
@inline(never) func countedLoop(_ step: ([UInt8]) -> Bool, count: Int) -> Int {
    var passed = 0
    for index in 0..<count where step(tokens[index % tokens.count]) { passed += 1 }
    return passed
}

if let count = options.count {
    let step = work()
    let passed = countedLoop(step, count: count)
    print("COUNTED \(count) \(passed)")
    exit(0)
}

if options.warmup > 0 { _ = runAll(seconds: options.warmup, record: false) }
let elapsed = runAll(seconds: options.seconds, record: true)
let total = counts.withLock { $0.reduce(0, +) }
print("RESULT \(Double(total) / elapsed) \(total) \(elapsed)")
