import CoreMetrics
import EntitlementTokens
import Prometheus
import Synchronization

/// The gate's metrics under the names of docs/DESIGN.md#metrics, recorded through
/// swift-metrics into one Prometheus registry that `GET /metrics` renders.
///
/// Each instance has its own registry and passes its factory to every metric
/// (no global `MetricsSystem.bootstrap`), so tests can run many gates in one
/// process and read each one's numbers. Every labelled series is made once
/// here, with its `# HELP` text (``help``): the request path only increments.
package final class GateMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// By status, then by the index of the kind in ``kinds``: no string is built per request.
    private let verdicts: [GateStatus: [CoreMetrics.Counter]]
    private let durations: [Endpoint: CoreMetrics.Timer]
    let inFlight: CoreMetrics.Meter
    /// Answers of the auth and manifest routes, written from the event loop (``DirectAnswerHandler``).
    let directAnswers: CoreMetrics.Counter
    private let replayOperations: [String: CoreMetrics.Counter]
    let replayDuration: CoreMetrics.Timer
    let replayFailOpen: CoreMetrics.Counter
    /// `catreplay` 2: a CAT allowed although its `cti` was seen before.
    let catReuse: CoreMetrics.Counter
    /// CATs renewed at the auth routes (`catr`).
    let catRenewals: CoreMetrics.Counter
    private let cache: [String: CoreMetrics.Counter]
    private let sessions: [String: CoreMetrics.Counter]
    private let manifestFetches: [String: CoreMetrics.Counter]
    private let manifestURIs: [String: CoreMetrics.Counter]
    let keysLoaded: CoreMetrics.Gauge
    /// Files in the key folders that are not trusted (KeyNotices).
    let keyFilesSkipped: CoreMetrics.Gauge
    private let keyReloads: [String: CoreMetrics.Counter]
    /// Not in the list of docs/DESIGN.md#metrics: requests cut off by a limit (413, 431, 503 when the body budget is spent).
    let limitRefusals: CoreMetrics.Counter
    let connectionsOpen: CoreMetrics.Meter
    private let connectionsRefused: [String: CoreMetrics.Counter]
    /// Requests whose head or body did not arrive within `--request-timeout`.
    let requestTimeouts: CoreMetrics.Counter
    /// Decision spans sent to `--otlp-endpoint`, and those dropped, by reason.
    let spansExported: CoreMetrics.Counter
    let spansDropped: [SpanDropReason: CoreMetrics.Counter]
    /// CDN exchanges by profile, kind and status: made on first use, since
    /// the profiles are the operator's (a reload may name new ones).
    private let exchanges = Mutex<[String: CoreMetrics.Counter]>([:])
    private let factory: PrometheusMetricsFactory
    /// The keys and secrets in use (`tokengate_key_info`, `tokengate_secrets_loaded`), set at every load.
    let keys = KeyInventory()
    /// Redis requests sent and not yet answered, timed-out ones included
    /// (`tokengate_replay_store_outstanding_requests`), read at each scrape;
    /// nil when the replay store is not Redis.
    private let replayOutstanding: (@Sendable () -> Int)?

    /// Why a decision span was not exported.
    enum SpanDropReason: String, Sendable, CaseIterable {
        case queueFull = "queue-full"
        case exportFailed = "export-failed"
    }

    /// The endpoints timed in `tokengate_request_duration_seconds`.
    enum Endpoint: String, Sendable, CaseIterable {
        case authRequest = "auth-request"
        case forwardAuth = "forward-auth"
        case extAuthz = "ext-authz"
        case verify, inspect, playback
        case renew = "playback-renew"
        case manifest, debugger, healthz, readyz, metrics, other
    }

    /// The `kind` label of a verdict: a token kind, or `none` when no token was decoded.
    static let kinds = TokenKind.allCases.map(\.rawValue) + ["none", "session", CATOrigin.kindLabel]

    init(
        version: String = ProductVersion.version,
        commit: String = ProductVersion.commit,
        replayOutstanding: (@Sendable () -> Int)? = nil
    ) {
        self.replayOutstanding = replayOutstanding
        let registry = PrometheusCollectorRegistry()
        // Only for CoreMetrics' bookkeeping: every series below is made in the
        // registry itself, with its `# HELP` text (the factory would register
        // them without one).
        let factory = PrometheusMetricsFactory(registry: registry)
        self.registry = registry
        self.factory = factory
        let make = SeriesMaker(registry: registry, factory: factory)
        var verdicts: [GateStatus: [CoreMetrics.Counter]] = [:]
        for status in GateStatus.allCases {
            verdicts[status] = Self.kinds.map { kind in make.counter("tokengate_verdicts_total", [("status", status.rawValue), ("kind", kind)]) }
        }
        self.verdicts = verdicts
        var durations: [Endpoint: CoreMetrics.Timer] = [:]
        for endpoint in Endpoint.allCases {
            durations[endpoint] = make.timer("tokengate_request_duration_seconds", [("endpoint", endpoint.rawValue)])
        }
        self.durations = durations
        inFlight = make.meter("tokengate_requests_in_flight")
        directAnswers = make.counter("tokengate_direct_answers_total")
        replayOperations = make.counters("tokengate_replay_store_operations_total", "outcome", ["accepted", "replayed", "unavailable"])
        replayDuration = make.timer("tokengate_replay_store_duration_seconds")
        replayFailOpen = make.counter("tokengate_replay_fail_open_total")
        catReuse = make.counter("tokengate_cat_reuse_total")
        catRenewals = make.counter("tokengate_cat_renewals_total")
        cache = make.counters("tokengate_verdict_cache_total", "result", VerdictCacheEvent.allCases.map(\.rawValue))
        sessions = make.counters("tokengate_sessions_total", "result", ["issued", "valid", "expired", "invalid"])
        manifestFetches = make.counters("tokengate_manifest_fetches_total", "result", ManifestFetchResult.allCases.map(\.rawValue))
        manifestURIs = make.counters("tokengate_manifest_uris_total", "disposition", ["tokenized", "routed", "left-alone"])
        keysLoaded = make.gauge("tokengate_keys_loaded")
        keyFilesSkipped = make.gauge("tokengate_key_files_skipped")
        keyReloads = make.counters("tokengate_key_reloads_total", "result", ["success", "failure"])
        limitRefusals = make.counter("tokengate_limit_refusals_total")
        connectionsOpen = make.meter("tokengate_connections_open")
        connectionsRefused = make.counters("tokengate_connections_refused_total", "reason", ConnectionRefusal.allCases.map(\.rawValue))
        requestTimeouts = make.counter("tokengate_request_timeouts_total")
        spansExported = make.counter("tokengate_spans_exported_total")
        spansDropped = Dictionary(
            uniqueKeysWithValues: SpanDropReason.allCases.map {
                ($0, make.counter("tokengate_spans_dropped_total", [("reason", $0.rawValue)]))
            }
        )
        make.meter("tokengate_build_info", [("version", version), ("commit", commit)]).set(1)
    }

    /// The `# HELP` text of every series the gate exports, by name: the
    /// registry's own and the `process_*` ones ``ProcessMetrics`` writes.
    /// A test scrapes `/metrics` and checks that each has HELP and TYPE.
    static let help: [String: String] = [
        "tokengate_verdicts_total": "Answers of the auth endpoints, by status (a token status, or NO_TOKEN, VALID_SESSION, ...) and token kind.",
        "tokengate_request_duration_seconds": "Time from a request's head to its answer, by endpoint.",
        "tokengate_requests_in_flight": "Requests being answered now.",
        "tokengate_direct_answers_total": "Answers of the auth and manifest routes, written from the connection's event loop.",
        "tokengate_replay_store_operations_total": "One-time-use checks of media tokens, by outcome (accepted, replayed, unavailable).",
        "tokengate_replay_store_duration_seconds": "Time the replay store took to answer a one-time-use check.",
        "tokengate_cat_reuse_total": "Common Access Tokens with catreplay 2 (reuse detection) allowed although the replay store had seen their cti.",
        "tokengate_cat_renewals_total": "Common Access Tokens answered with a renewed one, as their catr asked (within exp - deadline <= now < exp).",
        "tokengate_replay_store_outstanding_requests":
            "Requests the gate sent to Redis and has no answer for, timed-out ones included (bounded by the client; 0 when the store answers).",
        "tokengate_replay_fail_open_total":
            "Media tokens accepted without a one-time-use check because the replay store did not answer (--replay-failure open).",
        "tokengate_verdict_cache_total": "Verdict cache lookups and removals of authentication and authorization tokens, by result.",
        "tokengate_sessions_total": "Playback sessions, by result (issued, valid, expired, invalid).",
        "tokengate_keys_loaded": "Trusted public keys in use.",
        "tokengate_key_files_skipped":
            "Files in the key folders that are not trusted (a README, a private key, a subdirectory), as of the last load; each is named in the log.",
        "tokengate_key_reloads_total": "Key reloads (SIGHUP or changed files), by result; a failure keeps the previous keys.",
        "tokengate_limit_refusals_total": "Requests cut off by a limit (413, 431, or 503 when the body budget is spent).",
        "tokengate_connections_open": "Client connections open now.",
        "tokengate_connections_refused_total": "Connections not served, by reason (accept-paused, max-connections, per-peer).",
        "tokengate_request_timeouts_total": "Requests whose head or body did not arrive within --request-timeout.",
        "tokengate_cdn_exchanges_total": "CDN exchanges (POST/GET /v1/playback), by profile, CDN token kind and status.",
        "tokengate_manifest_fetches_total":
            "Fetches of the manifest route from an origin, by result; a manifest shared from the cache is not fetched.",
        "tokengate_manifest_uris_total":
            "URIs of the manifests answered: tokenized (to the CDN with a token), routed (back through the gate), left-alone (outside the profile's folder, host or scheme: no token).",
        "tokengate_spans_exported_total": "Decision spans the --otlp-endpoint receiver accepted.",
        "tokengate_spans_dropped_total":
            "Decision spans not exported, by reason (queue-full: the export queue was full; export-failed: the receiver refused or did not answer).",
        "tokengate_build_info": "Always 1: the gate's version and the commit it was built from, as labels.",
    ].merging(ProcessMetrics.help) { first, _ in first }

    /// Makes each series in the registry with its help text and wraps it in
    /// the swift-metrics type the rest of the gate records through.
    private struct SeriesMaker {
        let registry: PrometheusCollectorRegistry
        let factory: PrometheusMetricsFactory

        /// The gate answers in tens of microseconds: Prometheus' default buckets start at 5 ms.
        static let durationBuckets: [Duration] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .seconds(1),
        ]

        func descriptor(_ name: String) -> MetricNameDescriptor {
            guard let help = GateMetrics.help[name] else { fatalError("\(name) has no help text in GateMetrics.help") }
            // An empty unit keeps the name as given.
            return MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
        }

        func counter(_ name: String, _ labels: [(String, String)] = []) -> CoreMetrics.Counter {
            let handler =
                labels.isEmpty
                ? registry.makeCounter(descriptor: descriptor(name))
                : registry.makeCounter(descriptor: descriptor(name), labels: labels)
            return CoreMetrics.Counter(label: name, dimensions: labels, handler: handler, factory: factory)
        }

        func counters(_ name: String, _ label: String, _ values: [String]) -> [String: CoreMetrics.Counter] {
            Dictionary(uniqueKeysWithValues: values.map { ($0, counter(name, [(label, $0)])) })
        }

        func meter(_ name: String, _ labels: [(String, String)] = []) -> CoreMetrics.Meter {
            let handler =
                labels.isEmpty
                ? registry.makeGauge(descriptor: descriptor(name))
                : registry.makeGauge(descriptor: descriptor(name), labels: labels)
            return CoreMetrics.Meter(label: name, dimensions: labels, handler: handler, factory: factory)
        }

        func gauge(_ name: String) -> CoreMetrics.Gauge {
            CoreMetrics.Gauge(
                label: name,
                dimensions: [],
                aggregate: false,
                handler: registry.makeGauge(descriptor: descriptor(name)),
                factory: factory
            )
        }

        func timer(_ name: String, _ labels: [(String, String)] = []) -> CoreMetrics.Timer {
            let handler =
                labels.isEmpty
                ? registry.makeDurationHistogram(descriptor: descriptor(name), buckets: Self.durationBuckets)
                : registry.makeDurationHistogram(descriptor: descriptor(name), labels: labels, buckets: Self.durationBuckets)
            return CoreMetrics.Timer(label: name, dimensions: labels, handler: handler, factory: factory)
        }
    }

    /// Why a connection was not served: the cap was reached (accepting
    /// paused: new connections wait in the backlog), a connection accepted in
    /// the same read as the one that reached it was closed, or one peer
    /// address had its share.
    enum ConnectionRefusal: String, CaseIterable {
        case acceptPaused = "accept-paused"
        case maximumConnections = "max-connections"
        case perPeer = "per-peer"
    }

    func countConnectionRefused(_ reason: ConnectionRefusal) { connectionsRefused[reason.rawValue]?.increment() }

    func countVerdict(_ status: GateStatus, kind: String) {
        guard let counters = verdicts[status], let index = Self.kinds.firstIndex(of: kind) else { return }
        counters[index].increment()
    }

    /// A request counted in `inFlight` since `start` has its answer: out of the gauge, its time recorded.
    func requestEnded(_ endpoint: Endpoint, since start: ContinuousClock.Instant) {
        inFlight.decrement()
        durations[endpoint]?.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }

    func countReplay(_ decision: ReplayDecision) {
        switch decision {
        case .accepted: replayOperations["accepted"]?.increment()
        case .replayed: replayOperations["replayed"]?.increment()
        case .unavailable: replayOperations["unavailable"]?.increment()
        }
    }

    func countCache(_ result: VerdictCacheEvent, by amount: Int = 1) {
        if amount > 0 { cache[result.rawValue]?.increment(by: amount) }
    }

    enum SessionResult: String { case issued, valid, expired, invalid }
    func countSession(_ result: SessionResult) { sessions[result.rawValue]?.increment() }

    func countExchange(profile: String, kind: String, status: String) {
        let key = profile + "\u{0}" + kind + "\u{0}" + status
        let counter = exchanges.withLock { made in
            if let counter = made[key] { return counter }
            let labels = [("profile", profile), ("kind", kind), ("status", status)]
            let make = SeriesMaker(registry: registry, factory: factory)
            let counter = make.counter("tokengate_cdn_exchanges_total", labels)
            made[key] = counter
            return counter
        }
        counter.increment()
    }

    func countKeyReload(success: Bool) { keyReloads[success ? "success" : "failure"]?.increment() }

    /// The Prometheus text exposition: the gate's series, then the
    /// standard `process_*` ones, read from `/proc` at each scrape.
    package func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        if let replayOutstanding {
            let name = "tokengate_replay_store_outstanding_requests"
            buffer.append(contentsOf: "# HELP \(name) \(Self.help[name]!)\n# TYPE \(name) gauge\n\(name) \(replayOutstanding())\n".utf8)
        }
        keys.emit(into: &buffer)
        ProcessMetrics.read()?.emit(into: &buffer)
        return buffer
    }
}

/// The decision's events, counted under the names of docs/DESIGN.md#metrics.
extension GateMetrics: DecisionEvents {
    func verdictCache(_ event: VerdictCacheEvent, count amount: Int) { countCache(event, by: amount) }

    func replayStore(_ decision: ReplayDecision, duration: Duration?) {
        if let duration {
            replayDuration.recordNanoseconds(duration.nanoseconds)
            RequestTrace.current?.span?.addStoreTime(nanoseconds: duration.nanoseconds)
        }
        countReplay(decision)
    }

    func replayFailedOpen() { replayFailOpen.increment() }

    func manifestFetched(_ result: ManifestFetchResult) { manifestFetches[result.rawValue]?.increment() }

    func manifestRewritten(tokenized: Int, routed: Int, leftAlone: Int) {
        if tokenized > 0 { manifestURIs["tokenized"]?.increment(by: tokenized) }
        if routed > 0 { manifestURIs["routed"]?.increment(by: routed) }
        if leftAlone > 0 { manifestURIs["left-alone"]?.increment(by: leftAlone) }
    }
}
