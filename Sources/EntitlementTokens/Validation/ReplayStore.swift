internal import COpenSSL
internal import Synchronization

/// The identity of a token for one-time use: SHA-256 of its signed bytes.
public struct ReplayIdentity: Sendable, Hashable {
    public let digest: [UInt8]

    public init(digest: [UInt8]) { self.digest = digest }

    init(sha256Of bytes: UnsafeRawBufferPointer) {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes.baseAddress, bytes.count, &output, &length, EVP_sha256(), nil)
        digest = output
    }
}

/// Remembers which media tokens were accepted. Pluggable so a fleet of servers
/// can share one (Redis, memcached…); it must be safe under concurrent use.
public protocol ReplayStore: Sendable {
    /// Records `identity` as accepted and returns true, or returns false if it
    /// was already accepted and not yet forgotten. Atomic: of many concurrent
    /// calls with one identity, exactly one returns true. The entry may be
    /// forgotten once `now` passes `until` (the token's expiry plus leeway),
    /// since an expired token is refused before the replay check anyway.
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> Bool
}

/// An in-process replay store: bounded, forgets entries after their tokens
/// expire, safe under concurrent use.
///
/// When full of unexpired entries it evicts the one closest to expiring,
/// which is the entry whose loss allows the shortest replay window; size the
/// capacity above your peak of (tokens accepted per second × token lifetime).
public final class InMemoryReplayStore: ReplayStore {
    private struct State {
        var expiries: [ReplayIdentity: Int64] = [:]
        /// Min-heap on expiry, for forgetting expired entries in order.
        var heap: [(expiry: Int64, identity: ReplayIdentity)] = []
    }

    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 1_000_000) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Entries currently remembered.
    public var count: Int { state.withLock { $0.expiries.count } }

    public func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> Bool {
        state.withLock { state in
            Self.forgetExpired(&state, now: now.millisecondsSince1970)
            if state.expiries[identity] != nil { return false }
            while state.expiries.count >= capacity, let oldest = Self.popMin(&state.heap) {
                state.expiries[oldest.identity] = nil
            }
            state.expiries[identity] = until.millisecondsSince1970
            Self.push(&state.heap, (until.millisecondsSince1970, identity))
            return true
        }
    }

    private static func forgetExpired(_ state: inout State, now: Int64) {
        while let first = state.heap.first, first.expiry < now {
            _ = popMin(&state.heap)
            state.expiries[first.identity] = nil
        }
    }

    private static func push(_ heap: inout [(expiry: Int64, identity: ReplayIdentity)], _ element: (Int64, ReplayIdentity)) {
        heap.append(element)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].expiry < heap[parent].expiry else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popMin(_ heap: inout [(expiry: Int64, identity: ReplayIdentity)]) -> (expiry: Int64, identity: ReplayIdentity)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let minimum = heap.removeLast()
        var parent = 0
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].expiry < heap[smallest].expiry { smallest = left }
            if right < heap.count, heap[right].expiry < heap[smallest].expiry { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return minimum
    }
}
