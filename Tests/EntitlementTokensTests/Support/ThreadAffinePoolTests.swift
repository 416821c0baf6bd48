import Foundation
import Synchronization
import Testing

@testable import EntitlementTokens

/// The pool behind parser and OpenSSL-context reuse: an element is never held
/// by two callers at once, a thread gets back what it gave, and idle elements
/// stay bounded.
@Suite struct ThreadAffinePoolTests {
    final class Element: @unchecked Sendable {
        let inUse = Atomic<Bool>(false)
    }

    @Test func aThreadGetsBackWhatItGave() {
        let pool = ThreadAffinePool<Element>(capacity: 4)
        #expect(pool.take() == nil)
        let element = Element()
        pool.give(element)
        #expect(pool.take() === element)
        #expect(pool.take() == nil)
    }

    @Test func idleElementsAreBounded() {
        let collected = Mutex<[Element]>([])
        let pool = ThreadAffinePool<Element>(capacity: 3)
        // From many threads, more elements than the pool keeps.
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10 { pool.give(Element()) }
        }
        #expect(pool.idleCount <= 3)
        #expect(pool.idleCount >= 1)
        // What is kept can be taken back, each element once.
        var taken: [Element] = []
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while let element = pool.take() { collected.withLock { $0.append(element) } }
        }
        taken = collected.withLock { $0 }
        #expect(taken.count >= 1)
        #expect(Set(taken.map(ObjectIdentifier.init)).count == taken.count)
    }

    @Test func noElementIsHeldTwiceAtOnce() {
        let pool = ThreadAffinePool<Element>(capacity: 4)  // fewer slots than threads: overflow and sharing both happen
        let made = Atomic<Int>(0)
        let doubleUse = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            for _ in 0..<2_000 {
                let element =
                    pool.take()
                    ?? {
                        made.add(1, ordering: .relaxed)
                        return Element()
                    }()
                if element.inUse.exchange(true, ordering: .acquiringAndReleasing) { doubleUse.add(1, ordering: .relaxed) }
                element.inUse.store(false, ordering: .releasing)
                pool.give(element)
            }
        }
        #expect(doubleUse.load(ordering: .relaxed) == 0)
        #expect(pool.idleCount <= 4)
        #expect(made.load(ordering: .relaxed) < 16 * 2_000)
    }
}
