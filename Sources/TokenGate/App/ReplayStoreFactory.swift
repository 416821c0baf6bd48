import EntitlementTokens
import EntitlementTokensRedis
import ServiceLifecycle

/// Makes the replay store `--replay` names, with what the gate needs beside
/// it: a readiness probe, a start-up check and the service that runs and closes it.
enum ReplayStoreFactory {
    struct Made: Sendable {
        var store: (any ReplayStore)?
        /// nil when the store answers; otherwise why not (for `/readyz`).
        var probe: @Sendable () async -> String? = { nil }
        /// Run once before serving; see ``ReplayStartupCheck``.
        var startupCheck: @Sendable () async -> ReplayStartupCheck = { .ready }
        /// Runs the store's background work until the gate shuts down, then
        /// closes its connections (after the HTTP server has stopped).
        var serve: @Sendable () async -> Void = { try? await gracefulShutdown() }
        /// Requests sent to Redis and not yet answered, for `/metrics`; nil for a store in the process.
        var outstanding: (@Sendable () -> Int)?
    }

    /// How long the start-up check waits for Redis (connection set-up and
    /// login included) before the gate starts with readiness red: longer than
    /// a request's deadline, so that a slow first connect on a loaded machine
    /// is not mistaken for an unreachable server.
    static let startupCheckTimeout = Duration.seconds(2)

    /// `clockSkew` is how far apart the clocks of the gates sharing Redis
    /// may run (twice the leeway: docs/DESIGN.md#clocks-and-one-time-use).
    static func make(
        _ setting: ReplaySetting,
        timeout: Duration,
        durability: ReplayDurability = .primary,
        clockSkew: Duration = RedisReplayStore.defaultClockSkew
    ) throws(GateConfigurationError) -> Made {
        switch setting {
        case .off:
            return Made(store: nil)
        case .memory:
            return Made(store: InMemoryReplayStore())
        case .redis(let url):
            let store: RedisReplayStore
            do {
                store = try RedisReplayStore(url: url, timeout: timeout, durability: durability, clockSkew: clockSkew)
            } catch {
                // The client's messages never hold the password.
                throw GateConfigurationError("--replay: \(error.description)")
            }
            return Made(
                store: store,
                probe: {
                    // A Sentinel client decides nothing until the gate's ServiceGroup runs it.
                    if let notFollowing = store.client.notFollowingSwitchovers { return notFollowing.description }
                    do throws(RedisClientError) {
                        try await store.checkHealth()
                        return nil
                    } catch {
                        // The mode and the addresses, never a password (docs/DESIGN.md#operators).
                        return "\(store.target): \(error.description)"
                    }
                },
                startupCheck: { await ReplayStartupCheck.redis(url: url) },
                serve: { try? await store.client.run() },
                outstanding: { store.client.outstanding.requests }
            )
        }
    }
}

/// What the start-up check found: serve, serve with readiness red, or refuse
/// to start.
enum ReplayStartupCheck: Sendable, Equatable {
    case ready
    /// Redis does not answer now (refused, timed out…): it may come up later,
    /// so the gate serves, with `/readyz` red (and 503 for media tokens)
    /// until it answers.
    case unreachable(String)
    /// Redis answers but will not let the gate in (wrong password, `NOAUTH`,
    /// `WRONGPASS`, `NOPERM`, no such database): waiting will not fix a
    /// setting, so the gate does not start.
    case refused(String)

    /// Pings, then writes the way a media token will (`SET … PX` under the
    /// key prefix), through a client of its own with a longer deadline, then
    /// closes it: a user that may ping but not write its keys is found here.
    static func redis(url: String) async -> ReplayStartupCheck {
        let store: RedisReplayStore
        do {
            store = try RedisReplayStore(url: url, timeout: ReplayStoreFactory.startupCheckTimeout)
        } catch {
            return .refused(error.description)
        }
        let result: ReplayStartupCheck
        do throws(RedisClientError) {
            try await store.checkHealth()
            try await store.checkWriteAccess()
            result = .ready
        } catch {
            result = classify(error)
        }
        await store.shutdown()
        return result
    }

    static func classify(_ error: RedisClientError) -> ReplayStartupCheck {
        switch error.code {
        case .authenticationFailed, .databaseSelectionFailed, .invalidURL, .invalidConfiguration, .tlsFailed:
            return .refused(error.description)
        case .errorReply, .unexpectedReply:
            // An ACL user without the right to PING or to SET the store's
            // keys is refused the same way at every attempt, and so is a
            // server that does not take SET … PX (a syntax error);
            // other error replies (LOADING, BUSY, OOM, READONLY) may pass.
            let permission = ["NOPERM", "NOAUTH", "WRONGPASS"].contains { error.message.contains($0) }
            if permission { return .refused(error.description) }
            if error.message.contains("ERR syntax error") {
                return .refused(error.description + " (the store writes SET … NX PX: Redis 6.2 or later, or Valkey)")
            }
            return .unreachable(error.description)
        default:
            return .unreachable(error.description)
        }
    }
}
