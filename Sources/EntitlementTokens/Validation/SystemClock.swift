#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension TokenTimestamp {
    /// The system's real-time clock, to the millisecond.
    @Sendable public static func now() -> TokenTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let milliseconds = Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
        return TokenTimestamp(millisecondsSince1970: milliseconds) ?? .latest
    }
}
