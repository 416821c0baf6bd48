import EntitlementTokens
import Synchronization

/// A W3C trace id: 16 bytes, held as two words, the first eight bytes in
/// `high`; written big-endian, so its bytes read as its hex does.
struct TraceID: Sendable, Equatable {
    var high: UInt64
    var low: UInt64
}

/// A request's place in its trace, as numbers: what a span export carries.
/// Ids are words rather than byte arrays so a span costs no allocation for them.
struct SpanIdentity: Sendable, Equatable {
    var traceID: TraceID
    /// The gate's own span.
    var spanID: UInt64
    /// The caller's span, when it sent a valid `traceparent`.
    var parentSpanID: UInt64?
    /// The caller's `tracestate`, when it sent a valid one beside it.
    var traceState: String?
    /// The W3C trace flags (bit 0: sampled).
    var flags: UInt8
}

/// What the gate decided, as a span says it.
struct SpanDecision: Sendable {
    var method: String
    /// `http.route`: the path, or the template of Envoy's prefix.
    var route: String
    /// `X-Token-Status`: `VALID_TOKEN`, `TOKEN_REPLAYED`, … .
    var status: String
    var reason: String
    var resource: String?
    var tokenID: String?
    var kind: String
    /// The CDN profile of a playback exchange.
    var profile: String? = nil
}

/// One decision as an exported span tells it (docs/DESIGN.md#span-export):
/// which route answered what, why, for which resource, and how long the
/// replay store took. Strings that came from a request are escaped as the
/// log escapes them: a collector's viewer is a terminal of its kind.
struct DecisionSpan: Sendable {
    var identity: SpanIdentity
    var decision: SpanDecision
    var startUnixNanoseconds: UInt64
    var endUnixNanoseconds: UInt64
    var httpStatus: Int
    /// The time spent waiting on the replay store, when it was asked.
    var storeNanoseconds: Int64?
}

/// Where a request's decision is gathered while it is served, bound to the
/// request's ``RequestTrace``: the responder says what was decided, the
/// replay store's metrics add the time they measured, and the span is made
/// when the answer is ready. A request without a decision (a probe, a 404)
/// makes no span.
final class SpanRecorder: Sendable {
    let startUnixNanoseconds = LibC.realtimeNanosecondsSince1970()
    let start = ContinuousClock.now
    private let storeNanoseconds = Atomic<Int64>(-1)
    private let decision = Mutex<SpanDecision?>(nil)

    /// What the gate decided, and on which route.
    func decided(_ decided: SpanDecision) {
        decision.withLock { $0 = decided }
    }

    /// The replay store's wait, added (a request may ask it more than once).
    func addStoreTime(nanoseconds: Int64) {
        _ = storeNanoseconds.compareExchange(expected: -1, desired: 0, ordering: .relaxed)
        storeNanoseconds.add(nanoseconds, ordering: .relaxed)
    }

    /// The finished span, when a decision was made.
    func finished(identity: @autoclosure () -> SpanIdentity, httpStatus: Int) -> DecisionSpan? {
        // Taken, not copied: a span is finished once, and its strings move on without another retain.
        guard var decided = decision.withLock({ $0.take() }) else { return nil }
        let elapsed = ContinuousClock.now - start
        let store = storeNanoseconds.load(ordering: .relaxed)
        decided.reason = TerminalText.escaped(decided.reason)
        decided.resource = decided.resource.map { TerminalText.escaped($0) }
        decided.profile = decided.profile.map { TerminalText.escaped($0) }
        return DecisionSpan(
            identity: identity(),
            decision: decided,
            startUnixNanoseconds: startUnixNanoseconds,
            endUnixNanoseconds: startUnixNanoseconds &+ UInt64(max(0, elapsed.nanoseconds)),
            httpStatus: httpStatus,
            storeNanoseconds: store < 0 ? nil : store
        )
    }
}
