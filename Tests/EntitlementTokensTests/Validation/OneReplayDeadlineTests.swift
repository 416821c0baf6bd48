import Foundation
import Synchronization
import Testing

@testable import EntitlementTokens

/// Issue 22 item 2: the caller's deadline is the one deadline. A store that
/// keeps a deadline (``ReplayStore/accept(_:until:now:within:)``) gets the
/// verifier's and the verifier starts no task or timer of its own; any other
/// store is raced against a timer, so a hanging store still holds no caller.
@Suite struct OneReplayDeadlineTests {
    /// Keeps its own deadline: records what it was given, never runs the undeadlined form.
    final class DeadlineKeepingStore: ReplayStore {
        let inner = InMemoryReplayStore()
        let deadlines = Mutex<[Duration]>([])
        let undeadlinedCalls = Atomic<Int>(0)

        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            undeadlinedCalls.add(1, ordering: .relaxed)
            return .unavailable("the verifier bypassed the deadline")
        }

        func accept(
            _ identity: ReplayIdentity,
            until: TokenTimestamp,
            now: TokenTimestamp,
            within deadline: Duration
        ) async -> ReplayDecision {
            deadlines.withLock { $0.append(deadline) }
            return await inner.accept(identity, until: until, now: now)
        }
    }

    @Test func aStoreThatKeepsItsDeadlineGetsTheVerifiersAndIsCalledDirectly() async {
        let store = DeadlineKeepingStore()
        let verifier = ServerAPITests.verifier(store: store, deadline: .milliseconds(70))
        let token = ServerAPITests.mediaToken(11, resource: "TNT")
        #expect(await verifier.verify(token).status == .validToken)
        #expect(await verifier.verify(token).status == .tokenReplayed)
        #expect(store.deadlines.withLock { $0 } == [.milliseconds(70), .milliseconds(70)])
        #expect(store.undeadlinedCalls.load(ordering: .relaxed) == 0)
    }

    /// Answers after 3 s and ignores cancellation: only the default race bounds it.
    struct StubbornStore: ReplayStore {
        func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 3) { continuation.resume(returning: .accepted) }
            }
        }
    }

    @Test func theDefaultRacesAStoreThatKeepsNone() async {
        let store = StubbornStore()
        let identity = ReplayIdentity(digest: Array(repeating: 7, count: 32))
        let decision = await store.accept(identity, until: Minting.issued, now: Minting.issued, within: .milliseconds(40))
        #expect(decision == .unavailable("the replay store did not answer within 0.04 seconds"))
    }
}
