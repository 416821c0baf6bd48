import Synchronization

/// Keeps the suites that load the machine (a fleet of gate processes) apart
/// from the suites that measure milliseconds (the Redis fault deadlines): all
/// test targets run in one process, suites in parallel, and on 2 cores the
/// one would measure the other. Each such suite holds this lock throughout
/// (a `TestScoping` trait in its own target).
public final class IntegrationLock: Sendable {
    public static let machine = IntegrationLock()

    private struct State: ~Copyable {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if free { continuation.resume() }
        }
    }

    /// Hands the lock to the first waiter, if any, in the order they came.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
