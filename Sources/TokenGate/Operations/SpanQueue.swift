/// The spans waiting for export, already encoded
/// (``OTLPTraceRequest/encodedSpan(_:)``), gathered in the batches they will
/// leave in: up to ``batchSize`` spans and ``batchBytes`` bytes a batch,
/// ``capacity`` spans and ``capacityBytes`` bytes in all. A batch is one
/// request's spans, ready to be wrapped and sent as they are.
struct SpanQueue {
    static let capacity = 2048
    /// Eight full batches: a receiver that is gone holds no more than this
    /// of the gate's memory, however long the spans' strings are.
    static let capacityBytes = 8 << 20
    static let batchSize = 512
    /// A batch's bound in bytes, under the 4 MiB a collector's receiver takes
    /// by default: a queue of long resources leaves in more batches rather
    /// than in one the receiver refuses whole. A span longer than that leaves alone.
    static let batchBytes = 1 << 20

    struct Batch {
        /// The spans' `ScopeSpans.spans` fields, one after another.
        var encoded: [UInt8] = []
        var count = 0
    }

    private var batches: [Batch] = []
    /// Spans queued, over every batch.
    private(set) var count = 0
    /// Their encoded bytes.
    private(set) var bytes = 0

    enum Added: Equatable {
        /// Queued; `batchReady` when a batch has just filled and can be sent.
        case queued(batchReady: Bool)
        /// The queue holds ``capacity`` spans, or the new one would take it
        /// past ``capacityBytes``: the new one is dropped.
        case full
    }

    mutating func add(_ encodedSpan: [UInt8]) -> Added {
        guard count < Self.capacity, bytes + encodedSpan.count <= Self.capacityBytes else { return .full }
        var batchReady = false
        if let last = batches.last, last.count < Self.batchSize,
            last.encoded.count + encodedSpan.count <= Self.batchBytes
        {
            batches[batches.count - 1].encoded += encodedSpan
            batches[batches.count - 1].count += 1
        } else {
            // The last batch is full. Full by bytes, it is ready now; full by
            // count, it was announced when its last span came.
            batchReady = batches.last.map { $0.count < Self.batchSize } ?? false
            // Room for a batch of spans like this one, so the batch is not copied as it grows.
            var batch = Batch()
            batch.encoded.reserveCapacity(min(Self.batchBytes, encodedSpan.count * Self.batchSize))
            batch.encoded += encodedSpan
            batch.count = 1
            batches.append(batch)
        }
        count += 1
        bytes += encodedSpan.count
        return .queued(batchReady: batchReady || batches[batches.count - 1].count == Self.batchSize)
    }

    /// The first batch, taken out of the queue.
    mutating func next() -> Batch? {
        guard !batches.isEmpty else { return nil }
        let batch = batches.removeFirst()
        count -= batch.count
        bytes -= batch.encoded.count
        return batch
    }

    /// Empties the queue; how many spans it held.
    mutating func removeAll() -> Int {
        defer {
            batches.removeAll()
            count = 0
            bytes = 0
        }
        return count
    }
}
