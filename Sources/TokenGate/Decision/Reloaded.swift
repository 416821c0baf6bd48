import Synchronization

/// A set the gate decides with that a reload replaces as a whole (the CDN
/// profiles of `--cdn-profile`, the keys of `--cat-key`): a request reads one
/// set, never a mix of old and new keys (docs/DESIGN.md#key-reloads).
final class Reloaded<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    var current: Value { value.withLock { $0 } }

    func replace(with value: Value) {
        self.value.withLock { $0 = value }
    }
}
