internal import RedisRESP

/// What a connection does between its socket opening and its first caller's
/// request (docs/DESIGN.md#the-redis-clients-state-machines): wait for the TLS
/// handshake when there is TLS, then `AUTH`, `SELECT` and a `PING`, pipelined
/// in one write, each reply checked in order, all by one deadline. The
/// connection counts as open only once the server has answered through it
/// (TLS handshake, login and database included).
struct RedisConnectionStartup: Sendable {
    /// One start-up command and what its reply must be.
    struct Step: Sendable {
        let command: RESPCommand
        /// The failure when the server refuses it for another reason than the login.
        let failure: RedisClientError.Code

        /// nil when `reply` is the answer this step wants, else why the connection cannot be used.
        func refusal(of reply: RESPReply, endpointDescription: String, hasPassword: Bool) -> RedisClientError? {
            if case .error(let message) = reply,
                message.starts(with: "NOAUTH".utf8) || message.starts(with: "WRONGPASS".utf8)
            {
                return RedisClientError(
                    .authenticationFailed,
                    hasPassword
                        ? "\(endpointDescription) refused the login: \(reply.summary)"
                        : "\(endpointDescription) wants a password (give one with password-file=, or in the URL): \(reply.summary)"
                )
            }
            guard reply.isOK || (command.name == "PING" && reply == .simpleString(Array("PONG".utf8))) else {
                return RedisClientError(failure, "\(endpointDescription) refused \(command.name): \(reply.summary)")
            }
            return nil
        }
    }

    /// The commands, in the order they are written and answered; never empty (`PING` is last).
    let steps: [Step]
    /// Whether the login waits for a TLS handshake (and its name check) to complete.
    let waitsForTLSHandshake: Bool
    /// Whether the endpoint has a password: a `NOAUTH` then means it was refused, else that one is wanted.
    let hasPassword: Bool
    /// The instant (nanoseconds, the connection's monotonic clock) by which the server must have answered `PING`.
    let deadline: UInt64

    init(steps: [Step], waitsForTLSHandshake: Bool, hasPassword: Bool, deadline: UInt64) {
        precondition(!steps.isEmpty, "a start-up ends with PING")
        self.steps = steps
        self.waitsForTLSHandshake = waitsForTLSHandshake
        self.hasPassword = hasPassword
        self.deadline = deadline
    }

    /// The start-up `endpoint` asks for: `AUTH` with its password, `SELECT`
    /// when its database is not 0, and `PING`.
    init(endpoint: RedisEndpoint, tls: Bool, deadline: UInt64) {
        var steps: [Step] = []
        if let password = endpoint.password {
            steps.append(
                Step(
                    command: endpoint.username.map { RESPCommand("AUTH", $0, password) } ?? RESPCommand("AUTH", password),
                    failure: .authenticationFailed
                )
            )
        }
        if endpoint.database != 0 {
            steps.append(Step(command: RESPCommand("SELECT", String(endpoint.database)), failure: .databaseSelectionFailed))
        }
        steps.append(Step(command: RESPCommand("PING"), failure: .unexpectedReply))
        self.init(steps: steps, waitsForTLSHandshake: tls, hasPassword: endpoint.password != nil, deadline: deadline)
    }
}
