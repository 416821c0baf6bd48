import CoreMetrics
import EntitlementTokens
import Prometheus

/// The gate's metrics under the names of SPEC §9, recorded through
/// swift-metrics into one Prometheus registry that `GET /metrics` renders.
///
/// Each instance has its own registry and passes its factory to every metric
/// (no global `MetricsSystem.bootstrap`), so tests can run many gates in one
/// process and read each one's numbers. Every labelled series is made once
/// here: the request path only increments.
final class GateMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// By status, then by the index of the kind in ``kinds``: no string is built per request.
    private let verdicts: [GateStatus: [CoreMetrics.Counter]]
    private let durations: [Endpoint: CoreMetrics.Timer]
    let inFlight: CoreMetrics.Meter
    private let replayOperations: [String: CoreMetrics.Counter]
    let replayDuration: CoreMetrics.Timer
    let replayFailOpen: CoreMetrics.Counter
    private let cache: [String: CoreMetrics.Counter]
    private let sessions: [String: CoreMetrics.Counter]
    let keysLoaded: CoreMetrics.Gauge
    private let keyReloads: [String: CoreMetrics.Counter]
    /// Not in SPEC §9's list: requests cut off by a limit (413, 431, 503 when the body budget is spent).
    let limitRefusals: CoreMetrics.Counter
    let connectionsOpen: CoreMetrics.Meter
    private let connectionsRefused: [String: CoreMetrics.Counter]
    /// Requests whose head or body did not arrive within `--request-timeout`.
    let requestTimeouts: CoreMetrics.Counter

    /// The endpoints timed in `tokengate_request_duration_seconds`.
    enum Endpoint: String, Sendable, CaseIterable {
        case authRequest = "auth-request", forwardAuth = "forward-auth", extAuthz = "ext-authz"
        case verify, inspect, debugger, healthz, readyz, metrics, other
    }

    /// The `kind` label of a verdict: a token kind, or `none` when no token was decoded.
    static let kinds = TokenKind.allCases.map(\.rawValue) + ["none", "session"]

    init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // The gate answers in tens of microseconds: the default buckets start at 5 ms.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        self.registry = registry
        var verdicts: [GateStatus: [CoreMetrics.Counter]] = [:]
        for status in GateStatus.allCases {
            verdicts[status] = Self.kinds.map { kind in
                CoreMetrics.Counter(label: "tokengate_verdicts_total", dimensions: [("status", status.rawValue), ("kind", kind)],
                                    factory: factory)
            }
        }
        self.verdicts = verdicts
        var durations: [Endpoint: CoreMetrics.Timer] = [:]
        for endpoint in Endpoint.allCases {
            durations[endpoint] = CoreMetrics.Timer(label: "tokengate_request_duration_seconds",
                                        dimensions: [("endpoint", endpoint.rawValue)], factory: factory)
        }
        self.durations = durations
        inFlight = CoreMetrics.Meter(label: "tokengate_requests_in_flight", factory: factory)
        replayOperations = Self.counters("tokengate_replay_store_operations_total", "outcome",
                                         ["accepted", "replayed", "unavailable"], factory)
        replayDuration = CoreMetrics.Timer(label: "tokengate_replay_store_duration_seconds", factory: factory)
        replayFailOpen = CoreMetrics.Counter(label: "tokengate_replay_fail_open_total", factory: factory)
        cache = Self.counters("tokengate_verdict_cache_total", "result", VerdictCacheEvent.allCases.map(\.rawValue), factory)
        sessions = Self.counters("tokengate_sessions_total", "result", ["issued", "valid", "expired", "invalid"], factory)
        keysLoaded = CoreMetrics.Gauge(label: "tokengate_keys_loaded", factory: factory)
        keyReloads = Self.counters("tokengate_key_reloads_total", "result", ["success", "failure"], factory)
        limitRefusals = CoreMetrics.Counter(label: "tokengate_limit_refusals_total", factory: factory)
        connectionsOpen = CoreMetrics.Meter(label: "tokengate_connections_open", factory: factory)
        connectionsRefused = Self.counters("tokengate_connections_refused_total", "reason",
                                           ConnectionRefusal.allCases.map(\.rawValue), factory)
        requestTimeouts = CoreMetrics.Counter(label: "tokengate_request_timeouts_total", factory: factory)
    }

    /// Why a connection was not served: the cap was reached (accepting
    /// paused: new connections wait in the backlog), a connection accepted in
    /// the same read as the one that reached it was closed, or one peer
    /// address had its share.
    enum ConnectionRefusal: String, CaseIterable {
        case acceptPaused = "accept-paused", maximumConnections = "max-connections", perPeer = "per-peer"
    }

    func countConnectionRefused(_ reason: ConnectionRefusal) { connectionsRefused[reason.rawValue]?.increment() }

    private static func counters(_ name: String, _ label: String, _ values: [String],
                                 _ factory: PrometheusMetricsFactory) -> [String: CoreMetrics.Counter] {
        Dictionary(uniqueKeysWithValues: values.map { ($0, CoreMetrics.Counter(label: name, dimensions: [(label, $0)], factory: factory)) })
    }

    func countVerdict(_ status: GateStatus, kind: String) {
        guard let counters = verdicts[status], let index = Self.kinds.firstIndex(of: kind) else { return }
        counters[index].increment()
    }

    func recordDuration(_ endpoint: Endpoint, _ duration: Duration) {
        durations[endpoint]?.recordNanoseconds(duration.nanoseconds)
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

    func countKeyReload(success: Bool) { keyReloads[success ? "success" : "failure"]?.increment() }

    /// The Prometheus text exposition.
    func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }
}

/// The decision's events, counted under SPEC §9's names.
extension GateMetrics: DecisionEvents {
    func verdictCache(_ event: VerdictCacheEvent, count amount: Int) { countCache(event, by: amount) }

    func replayStore(_ decision: ReplayDecision, duration: Duration?) {
        if let duration { replayDuration.recordNanoseconds(duration.nanoseconds) }
        countReplay(decision)
    }

    func replayFailedOpen() { replayFailOpen.increment() }
}
