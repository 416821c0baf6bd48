internal import RedisRESP

/// What one Cluster request does after each answer, as a value with no I/O
/// and no NIO (docs/DESIGN.md#state-machines-and-thin-handlers): answer the caller, follow a `MOVED` or `ASK`
/// to another node, or fail; and whether the topology should be refreshed.
/// ``ClusterRouter`` drives it, sending each hop with the request's one
/// deadline, so redirections are followed within it.
///
/// A redirection is safe to follow: the node that sent it did not execute the
/// command. A failure after sending is not (the write may have happened), so
/// it goes to the caller.
struct ClusterRedirectFollower: Sendable {
    /// Redirections followed per request before giving up (`ASK` then `MOVED` is two).
    static let maxRedirects = 5

    /// Error replies that say the cluster's state changes: an answer for the caller, and a refresh.
    static let clusterStateErrors = ["CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS", "MASTERDOWN"].map { Array($0.utf8) }

    /// The node the next hop goes to.
    private(set) var target: RedisNodeAddress
    /// The next hop is written after `ASKING` (an `ASK` redirection, this request only).
    private(set) var asking = false
    private(set) var redirects = 0
    let slot: Int?

    init(target: RedisNodeAddress, slot: Int?) {
        self.target = target
        self.slot = slot
    }

    enum Step: Equatable, Sendable {
        /// The caller's answer: a reply that is no redirection (error replies included).
        case answer(RESPReply, refreshTopology: Bool)
        /// Send again, to ``target`` (after `ASKING` when ``asking``).
        /// `movedSlot`: a `MOVED` says this slot now lives at the target, for every request.
        case follow(movedSlot: Int?)
        case fail(RedisClientError, refreshTopology: Bool)

        static func == (lhs: Step, rhs: Step) -> Bool {
            switch (lhs, rhs) {
            case let (.answer(a, r), .answer(b, s)): a == b && r == s
            case let (.follow(a), .follow(b)): a == b
            case let (.fail(a, r), .fail(b, s)): a.code == b.code && r == s
            default: false
            }
        }
    }

    /// The target answered `reply`.
    mutating func received(_ reply: RESPReply) -> Step {
        guard case .error(let message) = reply else { return .answer(reply, refreshTopology: false) }
        let redirect: ClusterRedirect?
        do {
            redirect = try ClusterRedirect(errorReply: message)
        } catch {
            return .fail(RedisClientError(.unexpectedReply, "\(target): \(error.message)"), refreshTopology: true)
        }
        guard let redirect else {
            return .answer(reply, refreshTopology: Self.clusterStateErrors.contains { message.starts(with: $0) })
        }
        guard let next = redirect.address(answeredBy: target) else {
            return .fail(RedisClientError(.unexpectedReply, "\(target) redirected to an invalid address"), refreshTopology: false)
        }
        guard redirects < Self.maxRedirects else {
            return .fail(
                RedisClientError(
                    .unexpectedReply,
                    "more than \(Self.maxRedirects) redirections for slot \(slot.map(String.init) ?? "?")"
                ),
                refreshTopology: true
            )
        }
        redirects += 1
        target = next
        switch redirect.kind {
        case .moved:
            // The slot's owner changed: from now on, and for everyone.
            asking = false
            return .follow(movedSlot: redirect.slot)
        case .ask:
            // This request only, during a migration: ASKING first, on the same connection.
            asking = true
            return .follow(movedSlot: nil)
        }
    }

    /// Sending to the target failed: the node may be gone (a replica may be
    /// taking over), so a closed, refused, timed-out or garbled connection
    /// asks for a refresh.
    func failed(_ error: RedisClientError) -> Step {
        switch error.code {
        case .connectionClosed, .connectionFailed, .timedOut, .tlsFailed, .protocolError:
            .fail(error, refreshTopology: true)
        default:
            .fail(error, refreshTopology: false)
        }
    }
}
