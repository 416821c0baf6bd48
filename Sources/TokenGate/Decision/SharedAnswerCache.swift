import Synchronization

/// The origin's answers shared among viewers (docs/DESIGN.md#the-manifest-route):
/// one fetch per key while it lasts, however many viewers ask at once, and
/// the whole bounded in bytes, not entries, so ten thousand small
/// manifests and ten large ones cost the same ceiling.
///
/// Concurrent misses of one key wait for the one load already running
/// (its `Task`), so a popular live playlist costs the origin one request
/// per lifetime, not one per viewer. Entries leave oldest first when the
/// bound is reached, and are dropped when found expired.
final class SharedAnswerCache<Value: Sendable>: Sendable {
    /// What a load gives: the value, how long it may be shared (zero: only
    /// with the viewers already waiting for it), and what it costs in bytes.
    struct Loaded: Sendable {
        var value: Value
        var lifetime: Duration
        var cost: Int
    }

    private struct Stored {
        var value: Value
        var expires: ContinuousClock.Instant
        var cost: Int
        var serial: UInt64
    }

    private struct State {
        var entries: [String: Stored] = [:]
        /// Keys in the order they were stored, with the serial that tells a
        /// stale position (the key stored again since) from a live one.
        var order: [(key: String, serial: UInt64)] = []
        var orderStart = 0
        var bytes = 0
        var serial: UInt64 = 0
        var loading: [String: Task<Loaded, Never>] = [:]
    }

    private enum Found {
        case fresh(Value)
        case wait(Task<Loaded, Never>)
    }

    let maximumBytes: Int
    private let state = Mutex(State())

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    /// Bytes held now (for the metric and the tests).
    var bytes: Int { state.withLock { $0.bytes } }
    var count: Int { state.withLock { $0.entries.count } }

    /// The shared value of `key`, loaded by `load` when none is fresh.
    func value(for key: String, load: @escaping @Sendable () async -> Loaded) async -> Value {
        let now = ContinuousClock.now
        let found: Found = state.withLock { state in
            if let stored = state.entries[key] {
                if stored.expires > now { return .fresh(stored.value) }
                state.entries[key] = nil
                state.bytes -= stored.cost
            }
            if let running = state.loading[key] { return .wait(running) }
            let task = Task { await load() }
            state.loading[key] = task
            return .wait(task)
        }
        switch found {
        case .fresh(let value):
            return value
        case .wait(let task):
            let loaded = await task.value
            store(loaded, for: key, from: task)
            return loaded.value
        }
    }

    private func store(_ loaded: Loaded, for key: String, from task: Task<Loaded, Never>) {
        state.withLock { state in
            // The first waiter back stores it; the others find the load gone.
            guard let running = state.loading[key], running == task else { return }
            state.loading[key] = nil
            guard loaded.lifetime > .zero, loaded.cost <= maximumBytes else { return }
            if let old = state.entries[key] { state.bytes -= old.cost }
            state.serial += 1
            state.entries[key] = Stored(value: loaded.value, expires: .now + loaded.lifetime, cost: loaded.cost, serial: state.serial)
            state.bytes += loaded.cost
            state.order.append((key, state.serial))
            while state.bytes > maximumBytes, state.orderStart < state.order.count {
                let oldest = state.order[state.orderStart]
                state.orderStart += 1
                if let stored = state.entries[oldest.key], stored.serial == oldest.serial {
                    state.entries[oldest.key] = nil
                    state.bytes -= stored.cost
                }
            }
            // The order list holds stale positions too; it is compacted once
            // half of it is behind its start, so it stays linear in the entries.
            if state.orderStart > 1024, state.orderStart * 2 > state.order.count {
                state.order.removeFirst(state.orderStart)
                state.orderStart = 0
            }
            if state.order.count - state.orderStart > 4 * max(state.entries.count, 256) {
                state.order = state.order[state.orderStart...].filter { state.entries[$0.key]?.serial == $0.serial }
                state.orderStart = 0
            }
        }
    }
}
