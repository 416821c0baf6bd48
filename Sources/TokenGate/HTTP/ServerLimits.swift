import HummingbirdCore
import NIOCore

/// The HTTP/1 server's fixed limits, for the gate and the debugger alike;
/// the configurable ones (deadline, connections, body budget) are
/// ``ConnectionLimits``.
enum ServerLimits {
    /// Limits of the HTTP server (docs/DESIGN.md#limits-deadlines-and-revocation: header sizes and timeouts on every
    /// request). A token travels in the original URI or one header; a real
    /// one is under 4 KiB, and nginx's own default limit on a request line is
    /// 8 KiB, so 16 KiB a field refuses nothing a proxy would pass on.
    static let maximumHeaderFieldBytes = 16 * 1024
    static let maximumHeaderListBytes = 32 * 1024
    static let maximumHeaderFields = 100
    /// A connection with nothing to read for this long is closed (a proxy's
    /// keep-alive pool reconnects; a stalled client stops holding a slot).
    static let idleTimeout = TimeAmount.seconds(30)
    /// Those limits as the HTTP/1 server's configuration, for the gate and the debugger alike.
    static let http1 = HTTP1Channel.Configuration(
        idleTimeout: idleTimeout,
        httpDecoderConfiguration: .init(
            maxHeaderFieldSize: maximumHeaderFieldBytes,
            maxHeaderListSize: maximumHeaderListBytes,
            maxHeaderFieldCount: maximumHeaderFields
        )
    )
}
