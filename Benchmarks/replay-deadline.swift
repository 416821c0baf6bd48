import Dispatch
// A microbenchmark of the replay decision's deadline mechanism (issue 22
// item 2, docs/PERFORMANCE.md "One deadline for the replay store"), kept
// standalone so it builds in seconds:
//
//   swiftc -O -parse-as-library Benchmarks/replay-deadline.swift -o /tmp/replay-deadline
//   /usr/bin/time -f "%U+%S s CPU" /tmp/replay-deadline raced 200000
//   /usr/bin/time -f "%U+%S s CPU" /tmp/replay-deadline direct 200000
//
import Synchronization

// The replay decision's deadline mechanism, before and after issue 22 item 2:
// before, the verifier raced the store in two unstructured Tasks (work + timer)
// behind a checked continuation; after, it awaits the store, which keeps the
// deadline itself. The store here answers at once (asynchronously), so what
// is measured is the mechanism alone.
final class DeadlineRace<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var finished = false
        var onFinish: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    func start(_ continuation: CheckedContinuation<Value, Never>) { state.withLock { $0.continuation = continuation } }
    @discardableResult
    func finish(_ value: Value) -> Bool {
        let (continuation, cleanup) = state.withLock { state -> (CheckedContinuation<Value, Never>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer {
                state.continuation = nil
                state.onFinish = nil
            }
            return (state.continuation, state.onFinish)
        }
        guard let continuation else { return false }
        continuation.resume(returning: value)
        cleanup?()
        return true
    }
    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinish = body
            return false
        }
        if already { body() }
    }
}

final class Store: Sendable {
    let count = Atomic<Int>(0)
    @inline(never) func accept(_ id: Int) async -> Int { count.add(1, ordering: .relaxed).newValue }
}

@inline(never) func raced(_ store: Store, _ id: Int, deadline: Duration) async -> Int {
    let race = DeadlineRace<Int>()
    return await withCheckedContinuation { continuation in
        race.start(continuation)
        let work = Task { race.finish(await store.accept(id)) }
        let timer = Task {
            try? await Task.sleep(for: deadline)
            if race.finish(-1) { work.cancel() }
        }
        race.onFinish { timer.cancel() }
    }
}

@inline(never) func direct(_ store: Store, _ id: Int, deadline: Duration) async -> Int {
    await store.accept(id)
}

let concurrency = 64

func run(_ name: String, n: Int, _ body: @escaping @Sendable (Store, Int, Duration) async -> Int) async {
    let store = Store()
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var i = worker
                while i < n {
                    _ = await body(store, i, .milliseconds(100))
                    i += concurrency
                }
            }
        }
    }
    let elapsed = ContinuousClock.now - start
    let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    print("\(name): \(n) decisions, 64 tasks, \(Int(ns / Double(n))) ns wall each")
}
@main
enum ReplayDeadlineBenchmark {
    static func main() async {
        let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "both"
        let n = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 200_000 : 200_000
        if mode == "raced" || mode == "both" { await run("raced (before)", n: n, raced) }
        if mode == "direct" || mode == "both" { await run("direct (after)", n: n, direct) }
    }
}
