import Synchronization

/// The W3C trace context (https://www.w3.org/TR/trace-context/) of the
/// request being served, bound to its task, so every line logged about the
/// request — a refusal in the responder, a fail-open warning deep in the
/// replay guard — carries `trace_id` and `span_id` without the decision
/// knowing of traces (docs/DESIGN.md#trace-context).
///
/// Reading a request costs an atomic increment and the header values; the
/// `traceparent` is parsed, and the ids are made, only when a line is logged.
/// A trace never changes a decision.
struct RequestTrace: Sendable {
    /// The request served by this task, when there is one.
    @TaskLocal static var current: RequestTrace?

    /// Every `traceparent` field line's value (more than one: a new trace).
    let traceParents: [String]
    /// Every `tracestate` field line's value, read only when spans are exported.
    let traceStates: [String]
    /// Which request of this process it is: the seed of its span id (and of
    /// the trace id it starts when the caller sent no valid `traceparent`).
    let sequence: UInt64
    /// With `--otlp-endpoint`, when the sampler records the request: where
    /// its decision is gathered for its span (docs/DESIGN.md#span-export).
    /// Nil otherwise, at no cost.
    let span: SpanRecorder?

    /// `sampler` is nil when spans are not exported.
    init(traceParents: [String], traceStates: [String] = [], sampler: TraceSampler? = nil) {
        self.traceParents = traceParents
        self.traceStates = traceStates
        let sequence = Self.counter.add(1, ordering: .relaxed).newValue
        self.sequence = sequence
        let recorded = sampler?.samples(
            parentFlags: Self.parent(of: traceParents)?.flags,
            traceIDLow: { Self.derived(sequence, tag: 2) }
        )
        span = recorded == true ? SpanRecorder() : nil
    }

    /// The trace this request belongs to (the caller's, or a new one) and the
    /// gate's own span in it, as lowercase hex: 32 and 16 digits.
    var ids: (traceID: String, spanID: String) {
        let traceID =
            parent?.traceID
            ?? Self.hex(Self.derived(sequence, tag: 1)) + Self.hex(Self.derived(sequence, tag: 2))
        return (traceID, Self.hex(Self.derived(sequence, tag: 0)))
    }

    /// The same ids as numbers, with the caller's span and flags, as a span
    /// export carries them: the ids a log line names are the exported ones.
    var spanIdentity: SpanIdentity {
        let parent = parent
        let traceID =
            parent.map { TraceID(high: Self.word(hex: $0.traceID.prefix(16)), low: Self.word(hex: $0.traceID.suffix(16))) }
            ?? TraceID(high: Self.derived(sequence, tag: 1), low: Self.derived(sequence, tag: 2))
        return SpanIdentity(
            traceID: traceID,
            spanID: Self.derived(sequence, tag: 0),
            parentSpanID: parent.map { Self.word(hex: $0.parentID[...]) },
            traceState: parent == nil ? nil : TraceState.combined(traceStates),
            flags: parent?.flags ?? 1
        )
    }

    /// The caller's span, when it sent exactly one valid `traceparent`.
    var parent: TraceParent? { Self.parent(of: traceParents) }

    private static func parent(of values: [String]) -> TraceParent? {
        guard values.count == 1 else { return nil }
        return TraceParent(values[0])
    }

    private static let counter = Atomic<UInt64>(0)
    /// Unpredictable ids without a system call per request: a keyed hash of
    /// the request's sequence under a key drawn once per process.
    private static let key: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    private static func derived(_ sequence: UInt64, tag: UInt64) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(sequence)
        hasher.combine(tag)
        let value = UInt64(bitPattern: Int64(hasher.finalize()))
        // All zeros is the one invalid id.
        return value == 0 ? 1 : value
    }

    /// Sixteen lowercase hex digits as a word; ``TraceParent`` checked them, so they always read.
    private static func word(hex digits: Substring) -> UInt64 {
        UInt64(digits, radix: 16)!
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// A `traceparent` value that W3C Trace Context accepts
/// (https://www.w3.org/TR/trace-context/#traceparent-header): version, trace
/// id, parent id and flags as lowercase hex; version `ff`, an all-zero id,
/// upper case or a wrong length is refused (the gate then starts a new
/// trace). A version above `00` is read by its first four fields, as the
/// specification asks of a version it does not know.
struct TraceParent: Sendable, Equatable {
    var traceID: String
    var parentID: String
    var flags: UInt8

    init?(_ value: String) {
        let bytes = Array(value.utf8)
        guard bytes.count >= 55,
            Self.isHex(bytes[0..<2]), !(bytes[0] == UInt8(ascii: "f") && bytes[1] == UInt8(ascii: "f")),
            bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
            Self.isHex(bytes[3..<35]), Self.isHex(bytes[36..<52]), Self.isHex(bytes[53..<55]),
            bytes[3..<35].contains(where: { $0 != UInt8(ascii: "0") }),
            bytes[36..<52].contains(where: { $0 != UInt8(ascii: "0") })
        else { return nil }
        let version00 = bytes[0] == UInt8(ascii: "0") && bytes[1] == UInt8(ascii: "0")
        if version00 {
            guard bytes.count == 55 else { return nil }
        } else if bytes.count > 55 {
            guard bytes[55] == UInt8(ascii: "-") else { return nil }
        }
        traceID = String(decoding: bytes[3..<35], as: UTF8.self)
        parentID = String(decoding: bytes[36..<52], as: UTF8.self)
        flags = UInt8(String(decoding: bytes[53..<55], as: UTF8.self), radix: 16)!
    }

    private static func isHex(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
