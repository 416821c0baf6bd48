internal import Synchronization

/// The identity of a token for one-time use: SHA-256 of its signed bytes.
public struct ReplayIdentity: Sendable, Hashable {
    /// SHA-256 of the token's signed bytes.
    public let digest: [UInt8]

    /// An identity from its digest.
    public init(digest: [UInt8]) { self.digest = digest }

    init(sha256Of bytes: Span<UInt8>) {
        self.init(sha256: OpenSSLDigest.digest(of: bytes, with: .sha256))
    }

    /// The identity of a SHA-256 already made (the signature check's).
    init(sha256: [UInt8]?) {
        // Only an allocation failure inside OpenSSL makes no digest; the
        // identity is then 32 zero bytes, as it was before (EVP_Digest's result unchecked).
        digest = sha256 ?? [UInt8](repeating: 0, count: 32)
    }
}

/// What a replay store answers for one media token.
public enum ReplayDecision: Sendable, Hashable, Codable {
    /// First use: the token is now recorded and may be accepted.
    case accepted
    /// The token was already accepted once and not yet forgotten.
    case replayed
    /// The store could not decide (down, too slow, refused the write): the
    /// verdict is `REPLAY_CHECK_UNAVAILABLE`, never an acceptance (fail closed).
    case unavailable(String)
}

/// Remembers which media tokens were accepted. Pluggable so a fleet of servers
/// can share one (Redis…); it must be safe under concurrent use.
///
/// A store that does I/O answers asynchronously and says how it failed
/// (docs/DESIGN.md#the-librarys-habits); the caller sets the deadline. A store that can answer at
/// once (the in-memory one) also implements ``acceptWithoutWaiting(_:until:now:)``,
/// which the synchronous verification path uses so that it pays nothing for
/// the asynchronous design.
public protocol ReplayStore: Sendable {
    /// Records `identity` as accepted (`.accepted`), or says it was already
    /// accepted and not yet forgotten (`.replayed`), or that it cannot tell
    /// (`.unavailable`). Atomic: of many concurrent calls with one identity, on
    /// however many servers share the store, exactly one is `.accepted`.
    ///
    /// `until` (the token's expiry plus leeway) and `now` are both read on
    /// the caller's wall clock: `until − now` is how much longer the caller
    /// could accept the token. A store keeps the entry at least that long
    /// from the call, measured on a clock of its own that no step of the
    /// wall clock moves, and never compares `until` with another clock than
    /// the caller's, which may be off by any amount: an entry written by
    /// a gate whose clock is behind Redis's, as an absolute Redis time,
    /// was dropped at once. A store shared by servers keeps it longer by
    /// the most their clocks may differ (docs/DESIGN.md#clocks-and-one-time-use).
    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision

    /// The same decision made without suspending, or nil when this store can
    /// only answer asynchronously (then the synchronous verification path
    /// answers `REPLAY_CHECK_UNAVAILABLE`: fail closed).
    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision?

    /// The same decision within `deadline` (from now): the caller's deadline
    /// is the one deadline. Past it, `.unavailable`; when the calling task is
    /// cancelled, promptly `.unavailable`.
    ///
    /// A store that keeps a deadline by itself (the Redis store: its
    /// connection's one timer and task cancellation) implements this and
    /// starts no task and no timer of its own. The default, for any other
    /// store, races ``accept(_:until:now:)`` against a timer in two
    /// unstructured tasks, so that even a store that ignores cancellation
    /// and hangs holds no caller past the deadline.
    func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        within deadline: Duration
    ) async -> ReplayDecision
}

extension ReplayStore {
    /// By default a store always needs to wait: nil, so ``accept(_:until:now:)`` is awaited.
    public func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        nil
    }

    /// By default ``accept(_:until:now:)`` against a timer; see the requirement.
    public func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        within deadline: Duration
    ) async -> ReplayDecision {
        let race = DeadlineRace<ReplayDecision>()
        return await withCheckedContinuation { continuation in
            race.start(continuation)
            let work = Task {
                race.finish(await self.accept(identity, until: until, now: now))
            }
            let timer = Task {
                try? await Task.sleep(for: deadline)
                if race.finish(.unavailable("the replay store did not answer within \(deadline)")) { work.cancel() }
            }
            race.onFinish { timer.cancel() }
        }
    }
}

/// One continuation resumed by whichever of two tasks finishes first.
private final class DeadlineRace<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var finished = false
        var onFinish: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<Value, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Resumes the waiter with `value` if nothing did before; true if this call did.
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

    /// Runs `body` when the race is decided (at once if it already is).
    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinish = body
            return false
        }
        if already { body() }
    }
}

/// An in-process replay store: bounded, forgets entries after their tokens
/// expire, safe under concurrent use.
///
/// An entry is forgotten only once both clocks say the token has expired:
/// the monotonic clock, `until − now` after it was written, and the wall
/// clock, past `until`. The wall clock alone forgets every entry when it
/// steps forward, and a step back then makes those tokens acceptable again;
/// the monotonic clock alone forgets an entry while a wall clock stepped
/// back still accepts its token (docs/DESIGN.md#clocks-and-one-time-use).
///
/// A store of at least 2,048 entries is kept in up to 64 shards by the
/// identity's hash, each with its own lock and an equal part of the capacity.
/// A hash table grows by rehashing every entry it holds, under its lock; one
/// table for a gate's hundreds of thousands of tokens stopped every request
/// for milliseconds each time it doubled, and that was the gate's p99
/// (docs/PERFORMANCE.md). A shard grows alone, a 64th of the work.
///
/// When a shard is full of unexpired entries it evicts its entry closest to
/// expiring, which is the entry whose loss allows the shortest replay window;
/// size the capacity above your peak of (tokens accepted per second × token lifetime).
public final class InMemoryReplayStore: ReplayStore {
    /// An identity as this store keeps it: the first 128 bits of the SHA-256,
    /// inline. The store holds every token accepted within its lifetime, most
    /// of a busy gate's memory, and an entry is then 24 bytes and no
    /// allocation of its own instead of an array each (docs/PERFORMANCE.md).
    /// Two tokens sharing 128 bits (about 2⁻⁸⁸ among a million entries) would
    /// make the second a "replay": a refusal, never an acceptance. A digest
    /// of another length than SHA-256's (the public initialiser takes any) is
    /// kept as its own SHA-256's first 128 bits.
    private struct Key: Hashable {
        let high: UInt64
        let low: UInt64

        init(_ identity: ReplayIdentity) {
            let bytes =
                identity.digest.count == 32
                ? identity.digest
                : OpenSSLDigest.digest(of: identity.digest.span, with: .sha256) ?? [UInt8](repeating: 0, count: 32)
            var high: UInt64 = 0
            var low: UInt64 = 0
            for index in 0..<8 {
                high = high << 8 | UInt64(bytes[index])
                low = low << 8 | UInt64(bytes[index + 8])
            }
            self.high = high
            self.low = low
        }
    }

    private struct State {
        /// Each identity remembered, and its `until` on the wall clock (ms since 1970).
        var expiries: [Key: Int64] = [:]
        /// Min-heap on the monotonic instant (ms) from which an entry may be
        /// forgotten if the wall clock agrees, for forgetting entries in order.
        var heap: [(expiry: Int64, key: Key)] = []
    }

    private final class Shard: Sendable {
        let state = Mutex(State())
    }

    /// Most identities remembered at once.
    public let capacity: Int
    private let shards: [Shard]
    /// Each shard's part of the capacity; the parts add up to at most `capacity`.
    private let shardCapacity: Int
    private let shardMask: UInt64

    static let maximumShards = 64
    /// A shard holds at least this many entries, so that a small store keeps
    /// its capacity exactly (one shard) and a shard's share of a skewed hash
    /// stays a small part of what it holds.
    static let minimumShardCapacity = 1024

    /// Milliseconds on a monotonic clock, from any origin.
    private let monotonicMilliseconds: @Sendable () -> Int64

    /// A store for one process, holding at most `capacity` identities.
    public convenience init(capacity: Int = 1_000_000) {
        let origin = ContinuousClock.now
        self.init(capacity: capacity) {
            let elapsed = (ContinuousClock.now - origin).components
            return elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        }
    }

    /// The same, with the monotonic clock given (the tests step the wall clock against it).
    init(capacity: Int, monotonicMilliseconds: @escaping @Sendable () -> Int64) {
        precondition(capacity > 0, "capacity must be positive")
        self.monotonicMilliseconds = monotonicMilliseconds
        self.capacity = capacity
        var count = 1
        while count < Self.maximumShards, capacity / (count * 2) >= Self.minimumShardCapacity { count *= 2 }
        shards = (0..<count).map { _ in Shard() }
        shardCapacity = capacity / count
        shardMask = UInt64(count - 1)
    }

    /// Entries currently remembered.
    public var count: Int { shards.reduce(0) { sum, shard in sum + shard.state.withLock { $0.expiries.count } } }

    /// How many shards the store is kept in (1 below 2,048 entries of capacity).
    var shardCount: Int { shards.count }

    /// Accepts `identity` unless it is remembered, and remembers it until `until`.
    public func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        decide(identity, until: until, now: now)
    }

    /// Decides at once: the in-memory store never waits.
    public func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        decide(identity, until: until, now: now)
    }

    private func decide(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision {
        let key = Key(identity)
        // The key is a SHA-256 prefix: its low bits are as even as a hash.
        let shard = shards[Int(key.low & shardMask)]
        let monotonic = monotonicMilliseconds()
        let wall = now.millisecondsSince1970
        return shard.state.withLock { state in
            Self.forgetExpired(&state, wall: wall, monotonic: monotonic)
            if state.expiries[key] != nil { return .replayed }
            while state.expiries.count >= shardCapacity, let oldest = Self.popMin(&state.heap) {
                state.expiries[oldest.key] = nil
            }
            state.expiries[key] = until.millisecondsSince1970
            Self.push(&state.heap, (monotonic + max(0, until.millisecondsSince1970 - wall), key))
            return .accepted
        }
    }

    /// Forgets the entries whose time is up on both clocks. One whose time is
    /// up on the monotonic clock only (the wall clock was stepped back, and
    /// this gate would accept its token again) waits as long again as the
    /// wall clock now says is left.
    private static func forgetExpired(_ state: inout State, wall: Int64, monotonic: Int64) {
        while let first = state.heap.first, first.expiry < monotonic {
            _ = popMin(&state.heap)
            guard let until = state.expiries[first.key] else { continue }
            if until < wall {
                state.expiries[first.key] = nil
            } else {
                push(&state.heap, (monotonic + (until - wall), first.key))
            }
        }
    }

    private static func push(_ heap: inout [(expiry: Int64, key: Key)], _ element: (Int64, Key)) {
        heap.append(element)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].expiry < heap[parent].expiry else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popMin(_ heap: inout [(expiry: Int64, key: Key)]) -> (expiry: Int64, key: Key)? {
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
