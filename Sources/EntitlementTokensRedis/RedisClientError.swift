internal import RedisRESP

/// Every way a Redis operation can fail, as a value the caller can switch on.
///
/// Equality is on the code, so callers and tests match the cause without
/// depending on wording. The message never holds a password.
public struct RedisClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes: their raw values appear in logs and metrics and never change meaning.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The `redis://` / `rediss://` URL does not parse.
        case invalidURL
        /// A setting is out of range, or the CA file cannot be read.
        case invalidConfiguration
        /// No connection: refused, unreachable, name not resolved, connect timed out.
        case connectionFailed
        /// The TLS handshake failed (untrusted certificate, wrong name…).
        case tlsFailed
        /// `AUTH` was refused (wrong user or password), or the server wants one and none was given.
        case authenticationFailed
        /// `SELECT` was refused (no such database).
        case databaseSelectionFailed
        /// No answer within the operation's deadline.
        case timedOut
        /// Too many requests or bytes already awaiting an answer: refused at once rather than queued.
        case overloaded
        /// The connection closed before the answer came.
        case connectionClosed
        /// The server answered with an error (`OOM`, `READONLY`, `NOPERM`…).
        case errorReply
        /// The server's bytes are not RESP2, or break a limit.
        case protocolError
        /// A well-formed answer this command never gives.
        case unexpectedReply
        /// The client was shut down.
        case shutDown
        /// `replicated` durability: no replica acknowledged the write in time (`WAIT` answered 0).
        case notReplicated
        /// The caller's task was cancelled before the answer came: its deadline is the one deadline.
        case cancelled
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
