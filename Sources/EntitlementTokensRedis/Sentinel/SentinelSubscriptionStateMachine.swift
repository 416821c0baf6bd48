internal import RedisRESP

/// What a `+switch-master` subscription tells its owner.
enum SentinelSubscriptionEvent: Sendable, Equatable {
    /// The sentinel confirmed `SUBSCRIBE +switch-master`.
    case subscribed
    /// The sentinel announced that our primary moved: time to ask again.
    case switchMaster(SentinelSwitchMaster)
    /// The subscription is over (the last event): why.
    case closed(RedisClientError)
}

/// Every decision of one `+switch-master` subscription connection to a
/// sentinel, with no I/O (docs/DESIGN.md#state-machines-and-thin-handlers, like ``RedisConnectionStateMachine``):
/// events in (connected, a decoded reply, the timer, closed), actions out;
/// ``SentinelSubscriptionHandler`` carries them out.
///
/// A subscribed connection receives unsolicited arrays, which the
/// request/response machine would take for replies to nobody, hence a
/// machine of its own. It sends `AUTH` (when the sentinels have a password)
/// and `SUBSCRIBE +switch-master` in one write, and must be subscribed within
/// the subscribe timeout. Subscribed, it delivers each `+switch-master` for
/// `primaryName` and ignores the other names' (one sentinel may watch many
/// primaries). It sends a `PING` every keep-alive interval and closes when
/// the previous one is still unanswered, so a sentinel that vanished without
/// closing the connection (a partition) is noticed and the owner moves on.
/// Anything else — an error reply, a message on another channel, a malformed
/// payload — closes the connection: the owner subscribes again, and the
/// discovery it starts then catches up on whatever was missed.
struct SentinelSubscriptionStateMachine {
    enum Action: Equatable {
        /// Write (and flush) the bytes.
        case write([UInt8])
        /// Arm the connection's one timer at this instant, replacing the armed one.
        case armTimer(at: UInt64)
        case deliver(SentinelSubscriptionEvent)
        /// Close the channel; ``closeReason`` says why.
        case closeChannel
    }

    private enum State {
        case idle
        /// `AUTH` sent; `SUBSCRIBE` behind it in the same write.
        case loggingIn
        case subscribing
        case subscribed(pingOutstanding: Bool)
        case closed
    }

    let primaryName: [UInt8]
    /// `AUTH [user] password`, when the sentinels want one.
    let login: RESPCommand?
    /// Nanoseconds from connecting to the `SUBSCRIBE` confirmation.
    let subscribeTimeout: UInt64
    /// Nanoseconds between `PING`s once subscribed; one unanswered for that long closes.
    let keepAliveInterval: UInt64
    let endpointDescription: String

    private var state = State.idle
    /// The instant the armed timer is for: an earlier wake-up is stale.
    private var timerAt: UInt64?
    private(set) var closeReason: RedisClientError?
    /// `+switch-master` messages for other primary names, ignored (for tests).
    private(set) var otherNames = 0

    init(
        primaryName: [UInt8],
        login: RESPCommand?,
        subscribeTimeout: UInt64,
        keepAliveInterval: UInt64,
        endpointDescription: String
    ) {
        self.primaryName = primaryName
        self.login = login
        self.subscribeTimeout = subscribeTimeout
        self.keepAliveInterval = keepAliveInterval
        self.endpointDescription = endpointDescription
    }

    static let subscribeCommand = RESPCommand("SUBSCRIBE", SentinelSwitchMaster.channel)
    static let pingCommand = RESPCommand("PING")

    var isClosed: Bool { if case .closed = state { true } else { false } }

    /// The channel is active: log in and subscribe, in one write.
    mutating func connected(now: UInt64) -> [Action] {
        guard case .idle = state else { return [] }
        var bytes: [UInt8] = []
        if let login {
            login.encode(into: &bytes)
            state = .loggingIn
        } else {
            state = .subscribing
        }
        Self.subscribeCommand.encode(into: &bytes)
        return [.write(bytes), arm(now + subscribeTimeout)]
    }

    mutating func received(_ reply: RESPReply, now: UInt64) -> [Action] {
        switch state {
        case .idle, .closed:
            return []
        case .loggingIn:
            guard reply.isOK else {
                if case .error = reply {
                    return fail(RedisClientError(.authenticationFailed, "sentinel \(endpointDescription) refused the login: \(reply.summary)"))
                }
                return fail(RedisClientError.unexpectedReply("AUTH", reply))
            }
            state = .subscribing
            return []
        case .subscribing:
            if case .error(let message) = reply {
                let code: RedisClientError.Code =
                    message.starts(with: "NOAUTH".utf8) || message.starts(with: "WRONGPASS".utf8)
                    ? .authenticationFailed : .errorReply
                return fail(RedisClientError(code, "sentinel \(endpointDescription) refused SUBSCRIBE: \(reply.summary)"))
            }
            guard reply == .array([.bulkString(Array("subscribe".utf8)), .bulkString(Array(SentinelSwitchMaster.channel.utf8)), .integer(1)]) else {
                return fail(RedisClientError.unexpectedReply("SUBSCRIBE", reply))
            }
            state = .subscribed(pingOutstanding: false)
            return [.deliver(.subscribed), arm(now + keepAliveInterval)]
        case .subscribed:
            guard case .array(let elements) = reply, let kind = elements.first else {
                return fail(RedisClientError(.unexpectedReply, "sentinel \(endpointDescription) sent \(reply.summary) on a subscribed connection"))
            }
            if kind == .bulkString(Array("pong".utf8)), elements.count == 2 {
                state = .subscribed(pingOutstanding: false)
                return []
            }
            let announcement: SentinelSwitchMaster
            do throws(RedisReplyShapeError) {
                announcement = try SentinelSwitchMaster(messageReply: reply)
            } catch {
                return fail(RedisClientError(.unexpectedReply, "sentinel \(endpointDescription): \(error.message)"))
            }
            guard announcement.primaryName == primaryName else {
                otherNames += 1
                return []
            }
            return [.deliver(.switchMaster(announcement))]
        }
    }

    mutating func timerFired(now: UInt64) -> [Action] {
        guard let timerAt, now >= timerAt else { return [] }
        self.timerAt = nil
        switch state {
        case .idle, .closed:
            return []
        case .loggingIn, .subscribing:
            return fail(
                RedisClientError(
                    .timedOut,
                    "sentinel \(endpointDescription) did not confirm SUBSCRIBE \(SentinelSwitchMaster.channel) within \(subscribeTimeout / 1_000_000) ms"
                )
            )
        case .subscribed(pingOutstanding: true):
            return fail(RedisClientError(.timedOut, "sentinel \(endpointDescription) did not answer PING within \(keepAliveInterval / 1_000_000) ms"))
        case .subscribed(pingOutstanding: false):
            state = .subscribed(pingOutstanding: true)
            return [.write(Self.pingCommand.encoded()), arm(now + keepAliveInterval)]
        }
    }

    /// The channel closed or failed, or its bytes are not RESP: the subscription is over.
    mutating func fail(_ error: RedisClientError) -> [Action] {
        if case .closed = state { return [] }
        state = .closed
        timerAt = nil
        closeReason = error
        return [.deliver(.closed(error)), .closeChannel]
    }

    private mutating func arm(_ instant: UInt64) -> Action {
        timerAt = instant
        return .armTimer(at: instant)
    }
}
