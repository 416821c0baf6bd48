/// The entries of an in-process cache, bounded in number and in bytes: when
/// an insert would pass either bound, the oldest entries go first. The
/// verdict cache and the CAT readings keep theirs here, each behind its own
/// lock. Every operation is amortised constant time.
struct OldestFirstEntries<Key: Hashable, Value> {
    private struct Entry {
        var value: Value
        var sequence: UInt64
        var cost: Int
    }

    private var entries: [Key: Entry] = [:]
    /// Insertion order for eviction; an item whose sequence no longer
    /// matches its entry is stale and skipped.
    private var order: [(key: Key, sequence: UInt64)] = []
    private var head = 0
    private var sequence: UInt64 = 0
    /// The sum of the entries' costs.
    private(set) var bytes = 0

    var count: Int { entries.count }

    subscript(key: Key) -> Value? { entries[key]?.value }

    mutating func removeValue(forKey key: Key) {
        if let old = entries.removeValue(forKey: key) { bytes -= old.cost }
    }

    /// Keeps `value` under `key` (replacing what was there), first removing
    /// the oldest entries while there are `maximumEntries` or while `cost`
    /// would pass `maximumBytes`. Returns how many were removed so.
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, maximumEntries: Int, maximumBytes: Int) -> Int {
        var evicted = 0
        removeValue(forKey: key)
        while entries.count >= maximumEntries || bytes + cost > maximumBytes, head < order.count {
            let oldest = order[head]
            head += 1
            if let entry = entries[oldest.key], entry.sequence == oldest.sequence {
                entries[oldest.key] = nil
                bytes -= entry.cost
                evicted += 1
            }
        }
        sequence += 1
        entries[key] = Entry(value: value, sequence: sequence, cost: cost)
        bytes += cost
        order.append((key, sequence))
        // Keep the order list proportional to the live entries: drop the
        // consumed prefix and the stale items once they dominate.
        if order.count - head > 2 * max(entries.count, 64) || head > 4096 {
            let entries = self.entries
            order = order[head...].filter { entries[$0.key]?.sequence == $0.sequence }
            head = 0
        }
        return evicted
    }
}
