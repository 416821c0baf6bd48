internal import Synchronization

/// The client's bound on requests sent and not yet answered, in count and in
/// bytes: a request that does not fit is refused at once (`overloaded`), so
/// a slow or stopped server never builds an unbounded queue in this process.
final class OutstandingBudget: Sendable {
    private struct Usage {
        var requests = 0
        var bytes = 0
    }

    let maxRequests: Int
    let maxBytes: Int
    private let usage = Mutex(Usage())

    init(maxRequests: Int, maxBytes: Int) {
        self.maxRequests = maxRequests
        self.maxBytes = maxBytes
    }

    /// Takes room for one request of `bytes`, or returns false when it does not fit.
    func reserve(bytes: Int) -> Bool {
        usage.withLock { usage in
            guard usage.requests < maxRequests, usage.bytes + bytes <= maxBytes else { return false }
            usage.requests += 1
            usage.bytes += bytes
            return true
        }
    }

    /// Gives back one request's room: once, when its answer arrived, its
    /// connection closed, or it was never sent.
    func release(bytes: Int) {
        usage.withLock { usage in
            usage.requests -= 1
            usage.bytes -= bytes
            assert(usage.requests >= 0 && usage.bytes >= 0, "released more than reserved")
        }
    }

    var outstanding: (requests: Int, bytes: Int) {
        usage.withLock { ($0.requests, $0.bytes) }
    }
}
