import EntitlementTokens
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Sends decision spans to `--otlp-endpoint` (docs/DESIGN.md#span-export), off
/// the request path: a request encodes its span, hands the bytes to a bounded
/// queue (``SpanQueue``) and goes on; this service sends what is queued in
/// batches, each within a deadline.
///
/// Tracing never holds or changes an answer. A full queue drops the new span,
/// a batch the receiver refuses or does not take in time is dropped, both
/// counted in `tokengate_spans_dropped_total`; the first failure is logged,
/// and the recovery. Batch sizes and timings are OpenTelemetry's batch span
/// processor's, with the delay cut to a second so a trace shows while the
/// player still waits.
final class SpanExporter: Service, Sendable {
    static let interval: Duration = .seconds(1)
    static let exportDeadline: Duration = .seconds(10)
    /// What the last spans may take at shutdown, after the server has answered its last request.
    static let shutdownDeadline: Duration = .seconds(5)

    let endpoint: OTLPEndpoint
    private let poster: OTLPHTTPPoster
    private let resource: OTLPTraceRequest.Service
    private let metrics: GateMetrics
    private let logger: Logger
    private let queue = Mutex(SpanQueue())
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let failing = Atomic<Bool>(false)

    /// Which requests record a span (`--trace-sample-ratio`).
    let sampler: TraceSampler

    init(endpoint: OTLPEndpoint, sampler: TraceSampler = .always, metrics: GateMetrics, logger: Logger) {
        self.endpoint = endpoint
        self.sampler = sampler
        poster = OTLPHTTPPoster(endpoint: endpoint)
        // `service.instance.id`: a random UUID (version 4), new for each process.
        resource = OTLPTraceRequest.Service(instance: TokenMinter.randomGUID())
        self.metrics = metrics
        self.logger = logger
        (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Encodes a finished span and queues it; never waits. The span is
    /// encoded here, on the request's thread, so the queue holds its bytes
    /// rather than its strings.
    func submit(_ span: DecisionSpan) {
        let encoded = OTLPTraceRequest.encodedSpan(span)
        switch queue.withLock({ $0.add(encoded) }) {
        case .full: metrics.spansDropped[.queueFull]?.increment()
        case .queued(let batchReady): if batchReady { ring.yield() }
        }
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
                let left = queue.withLock { $0.removeAll() }
                if left > 0 { metrics.spansDropped[.exportFailed]?.increment(by: Int64(left)) }
                return
            }
            guard let batch = queue.withLock({ $0.next() }) else { return }
            do {
                let head = OTLPTraceRequest.head(ofSpansLength: batch.encoded.count, service: resource)
                var body = ByteBuffer()
                body.reserveCapacity(head.count + batch.encoded.count)
                body.writeBytes(head)
                body.writeBytes(batch.encoded)
                try await poster.post(body, deadline: min(deadline, Self.exportDeadline))
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

}
