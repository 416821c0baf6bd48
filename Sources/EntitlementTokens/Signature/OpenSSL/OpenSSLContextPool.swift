/// Ready-to-use OpenSSL operation contexts for one key.
///
/// Setting up a verify context (`EVP_PKEY_CTX_new_from_pkey`, `…_verify_init`,
/// padding, digest) costs a few microseconds of allocation and provider
/// look-ups, a noticeable share of an RSA-2048 verify (~20 µs). A context is
/// not thread-safe but can be reused, so each key keeps idle ones in a
/// ``ThreadAffinePool``: a verify takes one (each thread preferably its own
/// from last time, still in its core's cache), or makes one when none is idle,
/// uses it alone, and gives it back. Under steady load that is one context per
/// concurrently verifying thread; at most ``capacity`` are kept idle, so a
/// burst does not pin memory forever (extras are freed on return).
final class OpenSSLContextPool<Context: AnyObject & Sendable>: Sendable {
    private let idle: ThreadAffinePool<Context>
    private let make: @Sendable () -> Context?
    /// The most idle contexts kept.
    let capacity: Int

    /// - Parameters:
    ///   - first: a context already made (e.g. to check at load time that the
    ///     key can be set up at all); it seeds the pool.
    ///   - make: makes one more context, or nil when OpenSSL cannot.
    init(first: Context?, capacity: Int = OpenSSLContextPool.defaultCapacity, make: @escaping @Sendable () -> Context?) {
        self.capacity = max(1, capacity)
        self.idle = ThreadAffinePool(capacity: self.capacity)
        self.make = make
        if let first { idle.give(first) }
    }

    /// Enough for every core to verify with the same key at once.
    static var defaultCapacity: Int { ThreadAffinePool<Context>.defaultCapacity }

    /// Runs `body` with a context that no other thread uses meanwhile.
    /// Returns nil when no context could be made (out of memory): callers
    /// treat that as "not verified", failing closed.
    func withContext<R>(_ body: (Context) -> R) -> R? {
        guard let context = idle.take() ?? make() else { return nil }
        defer { idle.give(context) }
        return body(context)
    }

    /// How many contexts are idle now (tests).
    var idleCount: Int { idle.idleCount }
}
