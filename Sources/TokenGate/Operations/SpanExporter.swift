import Logging
import ServiceLifecycle
import Synchronization

/// Sends decision spans to `--otlp-endpoint` (docs/DESIGN.md#span-export), off
/// the request path: a request hands its span to a bounded queue and goes on;
/// this service sends what is queued in batches, each within a deadline.
///
/// Tracing never holds or changes an answer. A full queue drops the new span,
/// a batch the receiver refuses or does not take in time is dropped, both
/// counted in `tokengate_spans_dropped_total`; the first failure is logged,
/// and the recovery. Batch sizes and timings are OpenTelemetry's batch span
/// processor's, with the delay cut to a second so a trace shows while the
/// player still waits.
final class SpanExporter: Service, Sendable {
    static let queueCapacity = 2048
    static let batchSize = 512
    /// A batch's bound in bytes (a span's ``OTLPTraceRequest/maximumEncodedBytes(of:)``
    /// summed), under the 4 MiB a collector's receiver takes by default: a
    /// batch of long resources is cut short rather than refused whole.
    static let batchBytes = 1 << 20
    static let interval: Duration = .seconds(1)
    static let exportDeadline: Duration = .seconds(10)
    /// What the last spans may take at shutdown, after the server has answered its last request.
    static let shutdownDeadline: Duration = .seconds(5)

    let endpoint: OTLPEndpoint
    private let poster: OTLPHTTPPoster
    private let resource: OTLPTraceRequest.Service
    private let metrics: GateMetrics
    private let logger: Logger
    private let queue = Mutex<[DecisionSpan]>([])
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let failing = Atomic<Bool>(false)

    /// Which requests record a span (`--trace-sample-ratio`).
    let sampler: TraceSampler

    init(endpoint: OTLPEndpoint, sampler: TraceSampler = .always, metrics: GateMetrics, logger: Logger) {
        self.endpoint = endpoint
        self.sampler = sampler
        poster = OTLPHTTPPoster(endpoint: endpoint)
        resource = OTLPTraceRequest.Service(instance: Self.instanceID())
        self.metrics = metrics
        self.logger = logger
        (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a finished span; never waits.
    func submit(_ span: DecisionSpan) {
        let queued: Int? = queue.withLock { spans in
            guard spans.count < Self.queueCapacity else { return nil }
            spans.append(span)
            return spans.count
        }
        guard let queued else {
            metrics.spansDropped[.queueFull]?.increment()
            return
        }
        if queued == Self.batchSize { ring.yield() }
    }

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { [ring] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.interval)
                    ring.yield()
                }
            }
            await withGracefulShutdownHandler {
                for await _ in doorbell {
                    await exportQueued(until: nil)
                }
            } onGracefulShutdown: { [ring] in
                ring.finish()
            }
            group.cancelAll()
        }
        // The spans of the last requests: this service is told to stop after the HTTP server has answered them.
        await exportQueued(until: ContinuousClock.now + Self.shutdownDeadline)
        poster.close()
    }

    /// Sends every queued span, a batch at a time; with `until`, no batch starts after it or runs past it.
    private func exportQueued(until end: ContinuousClock.Instant?) async {
        while true {
            let deadline = end.map { $0 - ContinuousClock.now } ?? Self.exportDeadline
            guard deadline > .zero else {
                let left = queue.withLock { spans in
                    defer { spans.removeAll() }
                    return spans.count
                }
                if left > 0 { metrics.spansDropped[.exportFailed]?.increment(by: Int64(left)) }
                return
            }
            let batch: [DecisionSpan] = queue.withLock { spans in
                let taken = Array(spans.prefix(Self.batchSpans(spans)))
                spans.removeFirst(taken.count)
                return taken
            }
            guard !batch.isEmpty else { return }
            do {
                try await poster.post(OTLPTraceRequest.encode(batch, service: resource), deadline: min(deadline, Self.exportDeadline))
                metrics.spansExported.increment(by: Int64(batch.count))
                if failing.exchange(false, ordering: .relaxed) {
                    logger.info("span export works again", metadata: ["otlp_endpoint": .string(endpoint.description)])
                }
            } catch {
                metrics.spansDropped[.exportFailed]?.increment(by: Int64(batch.count))
                if !failing.exchange(true, ordering: .relaxed) {
                    logger.warning(
                        "span export failed: spans are dropped until it works again (answers are unchanged)",
                        metadata: [
                            "otlp_endpoint": .string(endpoint.description), "reason": .string(error.description),
                            "dropped": .stringConvertible(batch.count),
                        ]
                    )
                }
            }
        }
    }

    /// How many of the queued spans, from the first, make the next batch: up
    /// to ``batchSize`` and ``batchBytes``, and at least one.
    static func batchSpans(_ queued: [DecisionSpan]) -> Int {
        var bytes = 0
        for (index, span) in queued.prefix(batchSize).enumerated() {
            bytes += OTLPTraceRequest.maximumEncodedBytes(of: span)
            if bytes > batchBytes { return max(1, index) }
        }
        return min(queued.count, batchSize)
    }

    /// A random UUID (version 4) for `service.instance.id`, new for each process.
    private static func instanceID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }
}
