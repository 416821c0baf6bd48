internal import Synchronization

/// Idle objects that are costly to set up and used by one thread at a time —
/// a libxml2 parser context, an OpenSSL verify context — kept for reuse, each
/// preferably by the thread that used it last.
///
/// Why not one shared stack under a lock: with two threads taking and
/// returning in turn, a stack hands each thread the object the *other* thread
/// just used, so every parse or verify began by pulling that object's memory
/// across cores, and every take and return wrote the same lock word and array.
/// On two cores that cost about a tenth of the throughput (the library reached
/// 1.77× its one-core rate where the C floor reaches 1.96×).
///
/// Here each thread has a home slot on a cache line of its own: it takes from
/// and returns to that slot with one atomic exchange, touching nothing another
/// thread writes. Only when the home slot is empty (first use, or more threads
/// than slots) does `take` fall back to a small locked overflow stack, and only
/// when the home slot is full does `give` park the object there. Objects in
/// other threads' slots are not searched for: that keeps a take to one
/// exchange, and what a finished thread leaves in its slot is bounded (slots
/// are shared by thread number modulo their count) and used by the next thread
/// of that number. At most `capacity` objects are kept idle; extras are
/// released on return.
final class ThreadAffinePool<Element: AnyObject>: @unchecked Sendable {
    // @unchecked: an element is reachable from exactly one place at a time —
    // one slot, the overflow stack, or the caller that took it — and moves
    // between them through an atomic exchange or the lock, which order the
    // accesses. Callers never share what they take.

    /// `slotCount` cache-line-sized cells, each holding one `Atomic<Int>`:
    /// 0 for empty, else the bit pattern of a retained `Element`.
    private let slots: UnsafeMutableRawPointer
    private let slotCount: Int
    private let overflow: Mutex<[Parked]>
    private let overflowCapacity: Int

    /// Lets a non-Sendable element through the `Mutex` (see the class comment).
    private struct Parked: @unchecked Sendable { let element: Element }

    /// Twice the processor count, at least 8: enough for every core to use
    /// one at once, with slack for threads that block.
    static var defaultCapacity: Int { max(8, 2 * LibC.onlineProcessorCount) }

    /// Two cache lines, so the adjacent-line prefetcher does not pair slots.
    private static var slotStride: Int { 128 }

    /// - Parameter capacity: the most idle objects kept (at least 1). Half of
    ///   them, at least one, are home slots; the rest the overflow stack.
    init(capacity: Int = ThreadAffinePool.defaultCapacity) {
        let capacity = max(1, capacity)
        slotCount = (capacity + 1) / 2
        overflowCapacity = capacity - slotCount
        overflow = Mutex([])
        slots = .allocate(byteCount: slotCount * Self.slotStride, alignment: Self.slotStride)
        for index in 0..<slotCount {
            (slots + index * Self.slotStride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        }
    }

    deinit {
        for index in 0..<slotCount {
            let bits = slot(index).pointee.exchange(0, ordering: .acquiring)
            if bits != 0 { Self.unmanaged(bits).release() }
            _ = slot(index).move()
        }
        slots.deallocate()
    }

    /// An idle element — preferably the one this thread returned last — or
    /// nil when none is idle (the caller makes a new one).
    func take() -> Element? {
        let bits = slot(forThread: ThreadIndex.current).pointee.exchange(0, ordering: .acquiring)
        if bits != 0 { return Self.unmanaged(bits).takeRetainedValue() }
        return overflow.withLock { $0.popLast() }?.element
    }

    /// Keeps `element` for the next `take` on this thread, or another's.
    func give(_ element: Element) {
        let retained = Unmanaged.passRetained(element)
        let bits = Int(bitPattern: retained.toOpaque())
        let parked = slot(forThread: ThreadIndex.current).pointee
            .compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged
        if parked { return }
        retained.release()
        let limit = overflowCapacity
        let parkedElement = Parked(element: element)
        overflow.withLock { stack in
            if stack.count < limit { stack.append(parkedElement) }
        }
    }

    /// Idle elements now (tests; racy under concurrent use).
    var idleCount: Int {
        var count = overflow.withLock { $0.count }
        for index in 0..<slotCount where slot(index).pointee.load(ordering: .acquiring) != 0 {
            count += 1
        }
        return count
    }

    private func slot(forThread index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        slot(index % slotCount)
    }

    private func slot(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (slots + index * Self.slotStride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    private static func unmanaged(_ bits: Int) -> Unmanaged<Element> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
    }
}

/// A small number per thread, handed out in order of first use: threads that
/// run at the same time get different numbers, so ``ThreadAffinePool`` can
/// give them different home slots.
enum ThreadIndex {
    private static let next = Atomic<Int>(1)
    private static let stored = LibC.ThreadLocalWord()

    static var current: Int {
        let known = stored.value
        if known != 0 { return known }
        let index = next.add(1, ordering: .relaxed).oldValue
        stored.set(index)
        return index
    }
}
