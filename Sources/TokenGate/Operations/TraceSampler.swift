/// Which requests record a span for export: by the caller's decision when it
/// sent one, else by ratio — OpenTelemetry's `parentbased_traceidratio`
/// (https://opentelemetry.io/docs/specs/otel/trace/sdk/#parentbased):
///
/// - a valid `traceparent` marked sampled is always recorded, one marked
///   unsampled never: a trace is whole or absent, whoever sampled it;
/// - a request that starts its trace is recorded when the trace id's
///   rightmost 56 bits, its random part, reach the rejection threshold
///   `(1 − ratio) × 2⁵⁶`, as OpenTelemetry's consistent probability sampling
///   compares them, so every service that samples a trace by its id at the
///   same ratio keeps the same traces.
struct TraceSampler: Sendable, Equatable {
    let ratio: Double
    private let rejectionThreshold: UInt64

    /// `ratio` in 0…1 (checked where the setting is read).
    init(ratio: Double) {
        precondition((0...1).contains(ratio))
        self.ratio = ratio
        rejectionThreshold = UInt64(((1 - ratio) * 0x1p56).rounded(.up))
    }

    static let always = TraceSampler(ratio: 1)

    /// Whether the request is recorded: `parentFlags` are the W3C flags of
    /// its caller's valid `traceparent`, nil when it starts its trace;
    /// `traceIDLow` is the new trace id's last 8 bytes, asked only then.
    func samples(parentFlags: UInt8?, traceIDLow: () -> UInt64) -> Bool {
        if let parentFlags { return parentFlags & 1 == 1 }
        if rejectionThreshold == 0 { return true }
        return traceIDLow() & 0x00FF_FFFF_FFFF_FFFF >= rejectionThreshold
    }
}
