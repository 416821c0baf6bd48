extension TokenTimestamp {
    /// The system's real-time clock, to the millisecond.
    @Sendable public static func now() -> TokenTimestamp {
        TokenTimestamp(millisecondsSince1970: LibC.realtimeMillisecondsSince1970()) ?? .latest
    }
}
