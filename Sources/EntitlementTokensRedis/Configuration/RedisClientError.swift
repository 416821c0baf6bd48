internal import RedisRESP

/// Every way a Redis operation can fail, as a value the caller can switch on.
///
/// Equality is on the code, so callers and tests match the cause without
/// depending on wording. The message never holds a password.
public struct RedisClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes: their raw values appear in logs and metrics and never
    /// change meaning. A struct, not an enum (like the library's
    /// `TokenError.Code` and postgres-nio's `PSQLError.Code`), so a newer
    /// client can add a code without breaking a caller's `switch`: match the
    /// codes you handle and keep a `default`.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name, as logs print it (`"timedOut"`).
        public let rawValue: String

        /// A code by its raw value, including one a newer client gives.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The `redis://` / `rediss://` URL does not parse.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// A setting is out of range, or the CA file cannot be read.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// No connection: refused, unreachable, name not resolved, connect timed out.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The TLS handshake failed (untrusted certificate, wrong name…).
        public static let tlsFailed = Code(rawValue: "tlsFailed")
        /// `AUTH` was refused (wrong user or password), or the server wants one and none was given.
        public static let authenticationFailed = Code(rawValue: "authenticationFailed")
        /// `SELECT` was refused (no such database).
        public static let databaseSelectionFailed = Code(rawValue: "databaseSelectionFailed")
        /// No answer within the operation's deadline.
        public static let timedOut = Code(rawValue: "timedOut")
        /// Too many requests or bytes already awaiting an answer: refused at once rather than queued.
        public static let overloaded = Code(rawValue: "overloaded")
        /// The connection closed before the answer came.
        public static let connectionClosed = Code(rawValue: "connectionClosed")
        /// The server answered with an error (`OOM`, `READONLY`, `NOPERM`…).
        public static let errorReply = Code(rawValue: "errorReply")
        /// The server's bytes are not RESP2, or break a limit.
        public static let protocolError = Code(rawValue: "protocolError")
        /// A well-formed answer this command never gives.
        public static let unexpectedReply = Code(rawValue: "unexpectedReply")
        /// The client was shut down.
        public static let shutDown = Code(rawValue: "shutDown")
        /// `replicated` durability: no replica acknowledged the write in time (`WAIT` answered 0).
        public static let notReplicated = Code(rawValue: "notReplicated")
        /// The caller's task was cancelled before the answer came: its deadline is the one deadline.
        public static let cancelled = Code(rawValue: "cancelled")

        /// Every code this version of the client gives.
        public static let allCases: [Code] = [.invalidURL, .invalidConfiguration, .connectionFailed, .tlsFailed, .authenticationFailed, .databaseSelectionFailed, .timedOut, .overloaded, .connectionClosed, .errorReply, .protocolError, .unexpectedReply, .shutDown, .notReplicated, .cancelled]
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }

    public static func == (lhs: RedisClientError, rhs: RedisClientError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    static func protocolError(_ error: RESPError) -> RedisClientError {
        RedisClientError(.protocolError, "the server's reply is not RESP2: \(error)")
    }

    static func errorReply(_ command: String, _ reply: RESPReply) -> RedisClientError {
        RedisClientError(.errorReply, "\(command) refused: \(reply.text ?? "?")")
    }

    static func unexpectedReply(_ command: String, _ reply: RESPReply) -> RedisClientError {
        RedisClientError(.unexpectedReply, "\(command) answered \(reply.summary)")
    }

    /// A reply other than the one `command` expects: the server's error
    /// reply, or a reply of another kind.
    static func notExpected(_ command: String, _ reply: RESPReply) -> RedisClientError {
        if case .error = reply { return errorReply(command, reply) }
        return unexpectedReply(command, reply)
    }
}

extension RESPReply {
    /// A short description for messages: a bulk string's bytes are not echoed.
    var summary: String {
        switch self {
        case .simpleString, .error, .integer: return "'\(text ?? "")'"
        case .bulkString(let bytes): return "a bulk string of \(bytes.count) bytes"
        case .null: return "null"
        case .array(let elements): return "an array of \(elements.count) elements"
        }
    }
}
