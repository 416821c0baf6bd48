import CDNTokens
import Synchronization

/// The CDN profiles the exchange issues with (`--cdn-profile`), replaced as a
/// whole when a reload reads them all again: a request sees one set, never a
/// mix of old and new keys.
final class CDNProfileStore: Sendable {
    private let current: Mutex<CDNProfileSet>

    init(_ profiles: CDNProfileSet) {
        current = Mutex(profiles)
    }

    var profiles: CDNProfileSet { current.withLock { $0 } }

    func replace(with profiles: CDNProfileSet) {
        current.withLock { $0 = profiles }
    }
}
