import CDNTokens
import EntitlementTokens
import Synchronization

/// The `--cat-key` keys in use, with the CATs they authenticated: a reload
/// replaces both at once (``Reloaded``), so a CAT read under the old keys is
/// never found under the new ones, whenever its reading ends.
struct CATKeySet: Sendable {
    let keys: [CATKey]
    let readings: CATReadings
}

/// CATs whose MAC or signature the key set checked, kept by the SHA-256 of
/// their text (docs/DESIGN.md#cat-at-the-origin). A player sends the same CAT
/// with every segment; found here, it is not decoded nor authenticated again,
/// and its claims are still judged against each request (time, URL, method,
/// address, `catreplay`). Only authenticated CATs are kept: a forged one is
/// refused again at full cost rather than filling the cache.
///
/// Bounded in entries (`--verdict-cache-size`; 0 keeps none) and in bytes;
/// when full, the oldest goes first. An entry is dropped once its `exp`
/// plus the leeway has passed: it could only be refused.
final class CATReadings: Sendable {
    typealias Key = Digest.Key

    let maximumEntries: Int
    let maximumBytes: Int
    private let entries = Mutex(OldestFirstEntries<Key, AuthenticatedCommonAccessToken>())

    init(maximumEntries: Int, maximumBytes: Int = 16 * 1024 * 1024) {
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
    }

    var count: Int { entries.withLock { $0.count } }

    /// What an entry is counted as: the decoded message and claims hold the
    /// CAT's bytes a few times over (its payload, the trees read from it).
    static func cost(ofText bytes: Int) -> Int { 4 * bytes + 512 }

    /// The authenticated reading of the CAT whose text hashed to `key`,
    /// unless its `exp` plus `leeway` is before `now` (seconds).
    func lookup(_ key: Key, now: Int64, leeway: Int64) -> AuthenticatedCommonAccessToken? {
        guard maximumEntries > 0 else { return nil }
        return entries.withLock { entries in
            guard let found = entries[key] else { return nil }
            if let expires = found.token.expires, case let (until, overflow) = expires.addingReportingOverflow(leeway), !overflow, until < now {
                entries.removeValue(forKey: key)
                return nil
            }
            return found
        }
    }

    func insert(_ key: Key, _ token: AuthenticatedCommonAccessToken, textBytes: Int) {
        let cost = Self.cost(ofText: textBytes)
        guard maximumEntries > 0, cost <= maximumBytes else { return }
        _ = entries.withLock { $0.insert(token, forKey: key, cost: cost, maximumEntries: maximumEntries, maximumBytes: maximumBytes) }
    }
}
