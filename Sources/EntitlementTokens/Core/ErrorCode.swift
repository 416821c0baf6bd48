/// A stable code of one error type, `Domain`: its raw value appears in JSON
/// output, logs and metrics and never changes meaning.
///
/// A struct, not an enum, so that a newer library can add a code without
/// breaking a caller's `switch` (which matches the codes it knows and keeps a
/// `default`), as swift-certificates' `ErrorCode` and postgres-nio's
/// `PSQLError.Code` are. ``TokenError/Code``, ``KeyError/Code`` and the Redis
/// client's `RedisClientError.Code` are this one type, each `Domain` with its
/// own codes, written once here rather than three times.
public struct ErrorCode<Domain>: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The code's stable name, as JSON and logs print it (`"invalidBase64"`).
    public let rawValue: String

    /// A code by its raw value, including one a newer library gives.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
