public import EntitlementTokens
internal import RedisRESP

/// One-time use across a fleet (SPEC §10): every server that shares the
/// Redis (≥ 6.2) or Valkey server accepts a media token at most once.
///
/// An accepted token is recorded as `SET <prefix><id> 1 NX PXAT <until>`,
/// where `<id>` is the Base64url SHA-256 of the signed bytes: atomic, so of
/// any number of concurrent attempts on any number of servers exactly one
/// gets `OK`, and the entry expires with the token (plus leeway). Anything
/// but `OK` or a null reply (an error reply such as `OOM` or `READONLY`, no
/// answer within the deadline, no connection, too many requests in flight)
/// is `.unavailable`: the verifier fails closed.
///
/// ```swift
/// let store = try RedisReplayStore(url: "redis://:secret@redis.internal:6379/0")
/// let verifier = TokenVerifier(signature: .trustedKeys(ring),
///     policy: VerificationPolicy(requestorID: "TNT", replayStore: store))
/// // readiness: await store.ping(); at exit: await store.shutdown()
/// ```
///
/// `PXAT` is compared with the Redis server's clock, and `until` comes from
/// the verifier's: keep both on NTP (docs/REDIS.md).
public final class RedisReplayStore: ReplayStore {
    public static let defaultKeyPrefix = "tokeninspect:replay:"

    public let client: RedisClient
    public let keyPrefix: String
    private let keyPrefixBytes: [UInt8]
    private static let (setWord, oneWord, nxWord, pxatWord) = (Array("SET".utf8), Array("1".utf8), Array("NX".utf8), Array("PXAT".utf8))

    public init(client: RedisClient, keyPrefix: String = RedisReplayStore.defaultKeyPrefix) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.keyPrefixBytes = Array(keyPrefix.utf8)
    }

    /// - Parameters:
    ///   - url: `redis://[[user]:password@]host[:port][/db]` or `rediss://…` (TLS).
    ///   - timeout: the longest one decision may take; past it, `.unavailable`.
    ///   - trustedCAFile: PEM CA certificates for `rediss://`; nil trusts the system store.
    public convenience init(url: String, keyPrefix: String = RedisReplayStore.defaultKeyPrefix,
                            timeout: Duration = .milliseconds(50), trustedCAFile: String? = nil) throws(RedisClientError) {
        var configuration = try RedisClientConfiguration(url: url, trustedCAFile: trustedCAFile)
        configuration.operationTimeout = timeout
        self.init(client: try RedisClient(configuration: configuration), keyPrefix: keyPrefix)
    }

    public func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        let key = ReplayKey.bytes(prefix: keyPrefixBytes, identity: identity)
        // PXAT must be positive; an entry that would already be gone cannot
        // stop a replay, so keep it at least a millisecond past `now`.
        let expiry = max(until.millisecondsSince1970, now.millisecondsSince1970 + 1, 1)
        let reply: RESPReply
        do {
            reply = try await client.send(Self.setCommand(key, expiringAt: expiry, onlyIfAbsent: true))
        } catch {
            return .unavailable(error.description)
        }
        return Self.decision(for: reply)
    }

    /// `SET <key> 1 [NX] PXAT <milliseconds>`: how a token is recorded, and the write check.
    static func setCommand(_ key: [UInt8], expiringAt milliseconds: Int64, onlyIfAbsent: Bool) -> RESPCommand {
        let expiry = Array(String(milliseconds).utf8)
        return RESPCommand(onlyIfAbsent ? [setWord, key, oneWord, nxWord, pxatWord, expiry] : [setWord, key, oneWord, pxatWord, expiry])
    }

    /// What a reply to `SET … NX PXAT` means for the token.
    static func decision(for reply: RESPReply) -> ReplayDecision {
        switch reply {
        case _ where reply.isOK: .accepted
        case .null: .replayed
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
    /// does: `SET <prefix>.write-check 1 PXAT <now + 10 s>`. A user that may
    /// `PING` but not `SET`, or not these keys (`NOPERM`), and a server older
    /// than Redis 6.2 (no `PXAT`: a syntax error) fail here, at start-up,
    /// rather than on every media token. Without `NX`, so servers starting
    /// together all pass.
    public func checkWriteAccess(now: TokenTimestamp = .now()) async throws(RedisClientError) {
        let command = Self.setCommand(Array(writeCheckKey.utf8), expiringAt: now.millisecondsSince1970 + 10_000, onlyIfAbsent: false)
        let reply = try await client.send(command)
        guard reply.isOK else { throw .notExpected("SET", reply) }
    }

    /// Closes the client's connections.
    public func shutdown() async {
        await client.shutdown()
    }
}
