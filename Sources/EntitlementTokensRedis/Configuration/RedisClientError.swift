public import EntitlementTokens
internal import RedisRESP

/// Every way a Redis operation can fail, as a value the caller can switch on.
///
/// Equality is on the code, so callers and tests match the cause without
/// depending on wording. The message never holds a password.
public struct RedisClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes, as logs and metrics print them (the library's
    /// `ErrorCode`: match the codes you handle and keep a `default`).
    public typealias Code = ErrorCode<RedisClientError>

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

extension ErrorCode where Domain == RedisClientError {
    /// The `redis://` / `rediss://` URL does not parse.
    public static var invalidURL: Self { Self("invalidURL") }
    /// A setting is out of range, or the CA file cannot be read.
    public static var invalidConfiguration: Self { Self("invalidConfiguration") }
    /// No connection: refused, unreachable, name not resolved, connect timed out.
    public static var connectionFailed: Self { Self("connectionFailed") }
    /// The TLS handshake failed (untrusted certificate, wrong name…).
    public static var tlsFailed: Self { Self("tlsFailed") }
    /// `AUTH` was refused (wrong user or password), or the server wants one and none was given.
    public static var authenticationFailed: Self { Self("authenticationFailed") }
    /// `SELECT` was refused (no such database).
    public static var databaseSelectionFailed: Self { Self("databaseSelectionFailed") }
    /// No answer within the operation's deadline.
    public static var timedOut: Self { Self("timedOut") }
    /// Too many requests or bytes already awaiting an answer: refused at once rather than queued.
    public static var overloaded: Self { Self("overloaded") }
    /// The connection closed before the answer came.
    public static var connectionClosed: Self { Self("connectionClosed") }
    /// The server answered with an error (`OOM`, `READONLY`, `NOPERM`…).
    public static var errorReply: Self { Self("errorReply") }
    /// The server's bytes are not RESP2, or break a limit.
    public static var protocolError: Self { Self("protocolError") }
    /// A well-formed answer this command never gives.
    public static var unexpectedReply: Self { Self("unexpectedReply") }
    /// The client was shut down.
    public static var shutDown: Self { Self("shutDown") }
    /// `replicated` durability: no replica acknowledged the write in time (`WAIT` answered 0).
    public static var notReplicated: Self { Self("notReplicated") }
    /// The caller's task was cancelled before the answer came: its deadline is the one deadline.
    public static var cancelled: Self { Self("cancelled") }
    /// A Sentinel client whose `run()` is not running: it could not learn of a
    /// switchover, so the replay store decides nothing until it runs.
    public static var notRunning: Self { Self("notRunning") }

    /// Every code this version of the client gives.
    public static var allCases: [Self] {
        [
            .invalidURL, .invalidConfiguration, .connectionFailed, .tlsFailed, .authenticationFailed, .databaseSelectionFailed, .timedOut,
            .overloaded, .connectionClosed, .errorReply, .protocolError, .unexpectedReply, .shutDown, .notReplicated, .cancelled, .notRunning,
        ]
    }
}
