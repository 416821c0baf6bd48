internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A small stack of ready-to-use OpenSSL operation contexts for one key.
///
/// Setting up a verify context (`EVP_PKEY_CTX_new_from_pkey`, `…_verify_init`,
/// padding, digest) costs a few microseconds of allocation and provider
/// look-ups, a noticeable share of an RSA-2048 verify (~20 µs). A context is
/// not thread-safe but can be reused, so each key keeps a stack of them:
/// a verify pops one (or makes one when the stack is empty), uses it alone,
/// and pushes it back. Under steady load the stack holds about one context per
/// concurrently verifying thread; it keeps at most ``capacity`` idle ones so a
/// burst does not pin memory forever (extras are freed on return).
final class OpenSSLContextPool<Context: AnyObject & Sendable>: Sendable {
    private let idle: Mutex<[Context]>
    private let make: @Sendable () -> Context?
    /// The most idle contexts kept.
    let capacity: Int

    /// - Parameters:
    ///   - first: a context already made (e.g. to check at load time that the
    ///     key can be set up at all); it seeds the pool.
    ///   - make: makes one more context, or nil when OpenSSL cannot.
    init(first: Context?, capacity: Int = OpenSSLContextPool.defaultCapacity, make: @escaping @Sendable () -> Context?) {
        self.idle = Mutex(first.map { [$0] } ?? [])
        self.capacity = max(1, capacity)
        self.make = make
    }

    /// Twice the processor count, at least 8: enough for every core to verify
    /// with the same key at once, with slack for threads that block.
    static var defaultCapacity: Int { max(8, 2 * onlineProcessorCount) }

    /// Runs `body` with a context that no other thread uses meanwhile.
    /// Returns nil when no context could be made (out of memory): callers
    /// treat that as "not verified", failing closed.
    func withContext<R>(_ body: (Context) -> R) -> R? {
        let reused = idle.withLock { $0.popLast() }
        guard let context = reused ?? make() else { return nil }
        let result = body(context)
        let capacity = self.capacity
        idle.withLock { stack in
            if stack.count < capacity { stack.append(context) }
        }
        return result
    }

    /// How many contexts are idle now (tests).
    var idleCount: Int { idle.withLock { $0.count } }
}

/// The number of online processors, read once (a generic class cannot
/// hold a stored static, so it lives here).
private let onlineProcessorCount: Int = {
    let count = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    return count > 0 ? Int(count) : 1
}()
