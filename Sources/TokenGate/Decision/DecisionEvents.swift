import EntitlementTokens

/// What the decision reports as it works, for whoever counts it: the
/// decision owns this protocol and Operations/ adopts it (`GateMetrics`), so
/// the decision never names the layer above it (docs/DESIGN.md#the-request-path).
protocol DecisionEvents: Sendable {
    /// A verdict-cache event, `amount` times.
    func verdictCache(_ event: VerdictCacheEvent, count amount: Int)
    /// One replay-store operation and how long it took.
    func replayStore(_ decision: ReplayDecision, duration: Duration?)
    /// A token accepted because the store could not answer (`--replay-failure open`).
    func replayFailedOpen()
    /// One fetch the manifest route made from an origin, and how it ended.
    func manifestFetched(_ result: ManifestFetchResult)
    /// One manifest answered: its URIs, by what the rewriting did with them.
    func manifestRewritten(tokenized: Int, routed: Int, leftAlone: Int)
}

/// How a fetch from a manifest origin ended: the `result` label of `tokengate_manifest_fetches_total`.
enum ManifestFetchResult: String, CaseIterable, Sendable {
    case fetched, unreadable
    case notFound = "not-found"
    case unavailable
}

/// The verdict cache's events, the `result` label of `tokengate_verdict_cache_total`.
enum VerdictCacheEvent: String, CaseIterable, Sendable {
    case hit, miss, insert, eviction, flush
    /// An allow verified under a key ring that a reload replaced meanwhile: dropped.
    case stale
}
