import EntitlementTokens
import Synchronization

/// Allow verdicts of authentication and authorization tokens, kept so that a
/// player presenting the same reusable token again is not verified again
/// (docs/DESIGN.md#the-verdict-cache). Media tokens are never put here: they are one-time use.
///
/// Keyed by the SHA-256 of the token's bytes as presented and of the
/// expectations (resource, device), so a token allowed for one channel is
/// never a hit for another. An entry lives until the token expires (without
/// the leeway: after that the verifier must speak) or the keys are reloaded
/// (``removeAll()``). Only allows are cached: refusals are cheap to repeat and
/// would let anyone fill the cache with forged tokens.
///
/// Revocation is exact (docs/DESIGN.md#revocation-is-exact): every flush starts a new generation, and an
/// insert made under an older generation — a verification that began before a
/// key reload and finished after its flush — is dropped, under the same lock
/// that flushes. Otherwise such an allow would outlive the key it rests on
/// until the token expires.
///
/// Bounded in entries and in bytes; when full, the oldest entry goes first.
final class VerdictCache: Sendable {
    typealias Key = Digest.Key

    private struct Entry {
        var allowance: Allowance
        var tokenID: String
        var expiresMilliseconds: Int64
    }

    private struct Store {
        var entries = OldestFirstEntries<Key, Entry>()
        /// Counts flushes; kept across them.
        var generation: UInt64 = 0
    }

    let maximumEntries: Int
    let maximumBytes: Int
    private let store = Mutex(Store())
    private let events: any DecisionEvents

    /// `maximumEntries` 0 makes a cache that never keeps anything.
    init(maximumEntries: Int, maximumBytes: Int = 16 * 1024 * 1024, events: any DecisionEvents) {
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
        self.events = events
    }

    var isEnabled: Bool { maximumEntries > 0 }
    var count: Int { store.withLock { $0.entries.count } }
    var bytes: Int { store.withLock { $0.entries.bytes } }
    /// The generation a caller reads before it verifies, and hands to
    /// ``insert(_:verdict:allowance:tokenID:generation:)``, and whether a
    /// lookup could find anything, read under one lock: an empty cache
    /// answers no lookup, so its key (a SHA-256 of the whole token) need not
    /// be made before the verification.
    /// A reading made stale by an insert meanwhile costs a verification, never a wrong answer.
    var generationAndEmptiness: (generation: UInt64, isEmpty: Bool) {
        store.withLock { ($0.generation, $0.entries.count == 0) }
    }

    static func key(token: some Collection<UInt8>, resource: String?, deviceID: String?) -> Key {
        var hasher = SHA256Hasher()
        Digest.updateFramed(&hasher, token)
        // A missing expectation is framed apart from an empty one.
        Digest.updateFramed(&hasher, resource)
        Digest.updateFramed(&hasher, deviceID)
        return Key(hasher.finalize())
    }

    /// The cached allow for `key`, while its token has not expired at `now`.
    func lookup(_ key: Key, now: TokenTimestamp) -> (allowance: Allowance, tokenID: String)? {
        guard isEnabled else { return nil }
        let found: (Allowance, String)? = store.withLock { store in
            guard let entry = store.entries[key] else { return nil }
            guard now.millisecondsSince1970 <= entry.expiresMilliseconds else {
                store.entries.removeValue(forKey: key)
                return nil
            }
            return (entry.allowance, entry.tokenID)
        }
        // A miss is counted by the caller once it knows the token's kind:
        // media tokens never enter the cache, so they are no misses.
        if found != nil { events.verdictCache(.hit, count: 1) }
        return found
    }

    /// Keeps an allow of a reusable token, made while ``generation`` was
    /// `generation`; an allow from an older generation (the keys were
    /// reloaded since) is dropped and counted as `stale`. Media tokens are
    /// refused here too, so that no caller can cache one by mistake.
    func insert(_ key: Key, verdict: VerifiedToken, allowance: Allowance, tokenID: String, generation: UInt64) {
        guard isEnabled, verdict.token.kind != .media else { return }
        let cost = allowance.byteCost + tokenID.utf8.count
        guard cost <= maximumBytes else { return }
        let evicted = store.withLock { store -> Int? in
            guard store.generation == generation else { return nil }
            return store.entries.insert(
                Entry(allowance: allowance, tokenID: tokenID, expiresMilliseconds: verdict.token.expiresAt.millisecondsSince1970),
                forKey: key,
                cost: cost,
                maximumEntries: maximumEntries,
                maximumBytes: maximumBytes
            )
        }
        guard let evicted else { return events.verdictCache(.stale, count: 1) }
        events.verdictCache(.insert, count: 1)
        events.verdictCache(.eviction, count: evicted)
    }

    /// Counts a lookup that found nothing, for a token that could have been cached.
    func countMiss() { events.verdictCache(.miss, count: 1) }

    /// Forgets every entry: the keys changed, so every verdict may have.
    func removeAll() {
        let flushed = store.withLock { store -> Int in
            let count = store.entries.count
            store = Store(generation: store.generation &+ 1)
            return count
        }
        events.verdictCache(.flush, count: flushed)
    }
}
