/// The gate's enumerated settings (`--replay-failure`, `--log-format`); the
/// command line reads them through `ExpressibleByArgument` in Command/.

import EntitlementTokensRedis

/// What the gate does when the replay store cannot answer.
enum ReplayFailureMode: String, Sendable, CaseIterable {
    /// Refuse with 503 `REPLAY_CHECK_UNAVAILABLE` (the safe default).
    case closed
    /// Accept, count `tokengate_replay_fail_open_total` and log each token. Insecure.
    case open
}

/// The shape of log lines.
package enum LogFormat: String, Sendable, CaseIterable {
    case json, text
}

/// When a media token counts as recorded by a Redis replay store
/// (docs/DESIGN.md#durability): the Redis store's own setting, by the name
/// the command line gives it.
typealias ReplayDurability = RedisDurability
