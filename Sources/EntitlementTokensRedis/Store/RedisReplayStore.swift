public import EntitlementTokens
internal import NIOCore
internal import RedisRESP

/// When an accepted token counts as recorded (docs/DESIGN.md#durability).
public enum RedisDurability: String, Sendable, Hashable, CaseIterable {
    /// The primary answered `OK`. A failover to a replica that had not yet
    /// received the write forgets it: that token can play once more.
    case primary
    /// The primary answered `OK` and then at least one replica acknowledged
    /// it (`WAIT 1 <remaining ms>` on the same connection); otherwise
    /// `.unavailable` — and the token is spent (the write stands on the
    /// primary), so the player's retry is `TOKEN_REPLAYED`.
    case replicated
}

/// One-time use across a fleet (docs/DESIGN.md#one-time-use-across-a-fleet): every server that shares the
/// Redis (≥ 6.2) or Valkey server accepts a media token at most once.
///
/// An accepted token is recorded as `SET <prefix><id> 1 NX PX <lifetime>`,
/// where `<id>` is the Base64url SHA-256 of the signed bytes: atomic, so of
/// any number of concurrent attempts on any number of servers exactly one
/// gets `OK`, and the entry lives while any server sharing the store could
/// still accept the token (``clockSkew``). Anything
/// but `OK` or a null reply (an error reply such as `OOM` or `READONLY`, no
/// answer within the deadline, no connection, too many requests in flight)
/// is `.unavailable`: the verifier fails closed.
///
/// ```swift
/// let store = try RedisReplayStore(url: "redis://:secret@redis.internal:6379/0")
/// let verifier = TokenVerifier(signature: .trustedKeys(ring),
///     policy: VerificationPolicy(requestorID: "TNT", replayStore: store))
/// // in the application's ServiceGroup: store.client (it shuts down with the group)
/// // readiness: await store.ping()
/// ```
///
/// The store's background work (with Sentinel, the `+switch-master`
/// subscription and the poll; with Cluster, the map refresher) runs only in
/// ``client``'s `Service.run()`. A standalone or Cluster store whose client
/// is never run still decides correctly, only slower to follow a failover:
/// the request that meets a lost or refused connection, a timeout,
/// `READONLY` or a redirect is `.unavailable` or redirected and starts the
/// rediscovery itself. A Sentinel store is `.unavailable` for every token
/// until its client runs (``RedisClient/notFollowingSwitchovers``): it could
/// not otherwise follow a switchover whose old primary keeps answering
/// (docs/REDIS.md). Without a `ServiceGroup`, call ``shutdown()`` at exit.
///
/// The lifetime is relative (`PX`, counted by Redis from the write), never an
/// absolute `PXAT`: `until` is a time by the verifier's clock, and Redis
/// would compare it with its own, so a gate whose clock runs behind Redis's
/// wrote entries Redis dropped at once (docs/DESIGN.md#clocks-and-one-time-use).
public final class RedisReplayStore: ReplayStore {
    public static let defaultKeyPrefix = "tokeninspect:replay:"

    public let client: RedisClient
    public let keyPrefix: String
    public let durability: RedisDurability
    /// The most by which the wall clocks of two servers sharing the store may
    /// differ: an entry is kept this much longer than its writer could itself
    /// accept the token, so that a server whose clock is behind the writer's,
    /// and accepts the token later, still finds it. The gate sets twice its
    /// leeway (each server within a leeway of the issuer's clock); the
    /// default is twice the default leeway (docs/DESIGN.md#clocks-and-one-time-use).
    public let clockSkew: Duration
    private let keyPrefixBytes: [UInt8]
    private let clockSkewMilliseconds: Int64
    private static let (setWord, oneWord, nxWord, pxWord) = (Array("SET".utf8), Array("1".utf8), Array("NX".utf8), Array("PX".utf8))

    public static let defaultClockSkew = Duration.seconds(60)

    public init(
        client: RedisClient,
        keyPrefix: String = RedisReplayStore.defaultKeyPrefix,
        durability: RedisDurability = .primary,
        clockSkew: Duration = RedisReplayStore.defaultClockSkew
    ) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.durability = durability
        self.clockSkew = clockSkew
        self.keyPrefixBytes = Array(keyPrefix.utf8)
        self.clockSkewMilliseconds = max(0, clockSkew.components.seconds * 1000 + clockSkew.components.attoseconds / 1_000_000_000_000_000)
    }

    /// - Parameters:
    ///   - url: any of ``RedisClientConfiguration/init(url:trustedCAFile:credentialsDirectory:)``'s
    ///     forms: `redis://`, `rediss://`, `redis-sentinel://…#primaryName`,
    ///     `rediss-sentinel://`, `redis-cluster://`, `rediss-cluster://`.
    ///   - timeout: the longest one decision may take (discovery, redirections and `WAIT` included); past it, `.unavailable`.
    ///   - durability: when an accepted token counts as recorded.
    ///   - clockSkew: how far apart the clocks of the servers sharing the store may run (``clockSkew``).
    ///   - trustedCAFile: PEM CA certificates for the TLS forms; nil trusts the system store.
    public convenience init(
        url: String,
        keyPrefix: String = RedisReplayStore.defaultKeyPrefix,
        timeout: Duration = .milliseconds(50),
        durability: RedisDurability = .primary,
        clockSkew: Duration = RedisReplayStore.defaultClockSkew,
        trustedCAFile: String? = nil
    ) throws(RedisClientError) {
        var configuration = try RedisClientConfiguration(url: url, trustedCAFile: trustedCAFile)
        configuration.operationTimeout = timeout
        // A connection holds its other requests while its WAIT is out: more connections, fewer held.
        if durability == .replicated { configuration.maxConnections = max(configuration.maxConnections, 8) }
        self.init(client: try RedisClient(configuration: configuration), keyPrefix: keyPrefix, durability: durability, clockSkew: clockSkew)
    }

    /// Mode and address(es) for logs and `/readyz`, never a password.
    public var target: String { client.configuration.target }

    /// Within the store's `timeout` (``RedisClientConfiguration/operationTimeout``).
    public func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        await accept(identity, until: until, now: now, deadline: NIODeadline.now() + client.configuration.operationTimeout.timeAmount)
    }

    /// Within the caller's deadline, as given: the caller owns the one
    /// deadline (the store's `timeout` is only for callers that name none),
    /// kept by the connection's one timer, with no task or timer started here;
    /// a cancelled caller gets `.unavailable` at once.
    public func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        within deadline: Duration
    ) async -> ReplayDecision {
        await accept(
            identity,
            until: until,
            now: now,
            deadline: NIODeadline.now() + deadline.timeAmount
        )
    }

    private func accept(
        _ identity: ReplayIdentity,
        until: TokenTimestamp,
        now: TokenTimestamp,
        deadline: NIODeadline
    ) async -> ReplayDecision {
        if let notFollowing = client.notFollowingSwitchovers { return .unavailable(notFollowing.description) }
        let key = ReplayKey.bytes(prefix: keyPrefixBytes, identity: identity)
        let reply: RESPReply
        do {
            reply = try await client.execute(
                Self.setCommand(key, lifetime: Self.lifetime(until: until, now: now, clockSkew: clockSkewMilliseconds), onlyIfAbsent: true),
                key: key,
                deadline: deadline,
                afterReply: durability == .replicated ? .waitForReplicas(1) : .nothing
            )
        } catch {
            return .unavailable(error.description)
        }
        return Self.decision(for: reply)
    }

    /// How long Redis keeps an entry, in milliseconds from when it writes it:
    /// what is left of the writer's own window by the writer's clock
    /// (`until − now`), plus `clockSkew` for the other servers' clocks
    /// (docs/DESIGN.md#clocks-and-one-time-use). Both times are the writer's, so no other clock
    /// enters the difference; Redis counts it on its own clock, whatever
    /// that clock's offset. Past `until` (never for a token the verifier
    /// accepted) the entry is still kept `clockSkew`, and at least 1 ms,
    /// since `PX` must be positive.
    static func lifetime(until: TokenTimestamp, now: TokenTimestamp, clockSkew: Int64) -> Int64 {
        let own = max(0, until.millisecondsSince1970 - now.millisecondsSince1970)
        return max(1, own + clockSkew)
    }

    /// `SET <key> 1 [NX] PX <milliseconds>`: how a token is recorded, and the write check.
    static func setCommand(_ key: [UInt8], lifetime milliseconds: Int64, onlyIfAbsent: Bool) -> RESPCommand {
        let lifetime = Array(String(milliseconds).utf8)
        return RESPCommand(onlyIfAbsent ? [setWord, key, oneWord, nxWord, pxWord, lifetime] : [setWord, key, oneWord, pxWord, lifetime])
    }

    /// What a reply to `SET … NX PX` means for the token.
    /// With `replicated` durability an `OK` comes back as `[OK, WAIT's reply]`.
    static func decision(for reply: RESPReply) -> ReplayDecision {
        switch reply {
        case _ where reply.isOK: .accepted
        case .null: .replayed
        case .array(let replies) where replies.count == 2 && replies[0].isOK:
            switch replies[1] {
            case .integer(let acknowledged) where acknowledged >= 1: .accepted
            case .integer:
                .unavailable(
                    RedisClientError(
                        .notReplicated,
                        "no replica acknowledged the write within the deadline (WAIT 1 answered 0); the token is spent"
                    ).description
                )
            default: .unavailable(RedisClientError.notExpected("WAIT", replies[1]).description)
            }
        default: .unavailable(RedisClientError.notExpected("SET", reply).description)
        }
    }

    /// Whether Redis answers `PING` now, within the deadline: for `/readyz`.
    public func ping() async -> Bool {
        (try? await client.ping()) != nil
    }

    /// The same check, saying why it failed (wrong password, refused, timed
    /// out…): for a clear error at start-up.
    public func checkHealth() async throws(RedisClientError) {
        try await client.ping()
    }

    /// The key the write check sets: under the prefix, so an ACL key pattern
    /// that admits the replay keys admits it, and holding a `.`, which no
    /// replay key (Base64url) holds.
    public var writeCheckKey: String { keyPrefix + ".write-check" }

    /// Whether this client may write the store's keys the way ``accept(_:until:now:)``
    /// does: `SET <prefix>.write-check 1 PX 10000`. A user that may `PING`
    /// but not `SET`, or not these keys (`NOPERM`), fails here, at start-up,
    /// rather than on every media token. Without `NX`, so servers starting
    /// together all pass.
    ///
    /// In Cluster, one key on every primary: `<prefix>.write-check{<n>}`, the
    /// hash tag `<n>` chosen so the key's slot is one that primary owns.
    public func checkWriteAccess() async throws(RedisClientError) {
        let deadline = NIODeadline.now() + client.configuration.operationTimeout.timeAmount
        let keys: [[UInt8]]
        if let primaries = try await client.clusterPrimaries(deadline: deadline) {
            keys = primaries.map { _, ranges in Self.writeCheckKey(prefix: writeCheckKey, slotIn: ranges) }
        } else {
            keys = [Array(writeCheckKey.utf8)]
        }
        for key in keys {
            let reply = try await client.execute(Self.setCommand(key, lifetime: 10_000, onlyIfAbsent: false), key: key, deadline: deadline)
            guard reply.isOK else { throw .notExpected("SET", reply) }
        }
    }

    /// `<base>{<n>}` for the smallest n whose slot lies in `ranges`.
    static func writeCheckKey(prefix base: String, slotIn ranges: [ClosedRange<Int>]) -> [UInt8] {
        var n = 0
        while true {
            let tag = Array(String(n).utf8)
            if ranges.contains(where: { $0.contains(RedisHashSlot.slot(of: tag)) }) {
                return Array(base.utf8) + [UInt8(ascii: "{")] + tag + [UInt8(ascii: "}")]
            }
            n += 1
        }
    }

    /// Closes the client's connections.
    public func shutdown() async {
        await client.shutdown()
    }
}
