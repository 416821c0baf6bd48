internal import RedisRESP

/// A follow-up a request asks of its connection once its reply arrives.
enum AfterReply: Sendable {
    case nothing
    /// After `OK`, `WAIT <replicas> <remaining deadline in ms>` on this
    /// connection (WAIT counts only its own connection's writes), which takes
    /// no other request until WAIT answers; the caller gets
    /// `.array([OK, WAIT's reply])`. Below 1 ms left, the request fails
    /// `timedOut` without sending (`WAIT n 0` blocks forever).
    case waitForReplicas(Int)
}

/// Every decision of one Redis connection, with no I/O and no NIO
/// (docs/DESIGN.md#state-machines-and-thin-handlers, after postgres-nio's `ConnectionStateMachine`): events go in
/// (the channel active, the TLS handshake done, a request to send, a reply,
/// the timer, a cancellation, the channel closing), actions come out, and ``RESPConnectionHandler`` only carries
/// them out. `Promise` is whatever completes a caller (an `EventLoopPromise`
/// in the handler, a plain value in tests); time is nanoseconds on the
/// connection's monotonic clock, given with each event.
///
/// RESP answers in order, so pipelined requests need no ids on the wire: each
/// reply meets the oldest request. A request whose deadline passes (or whose
/// caller is cancelled) is failed at once but stays in the queue until its
/// reply arrives, so the replies after it still meet their own requests; it
/// keeps its bytes in the client's budget until then.
///
/// **Start-up.** connecting → (TLS handshake, when there is TLS) → logging
/// in → ready → closed. Once the channel is active (and its TLS handshake
/// done, name check included) the machine writes ``RedisConnectionStartup``'s
/// `AUTH`, `SELECT` and `PING` in one write and checks their replies in
/// order; the first refused one closes the connection with its typed error
/// (a wrong password, a database that does not exist, a server still
/// loading). After `PING`'s answer it says ``Action/loggedIn`` and writes
/// the requests that came meanwhile, held in the same bounded queue as
/// behind a `WAIT`. A reply before the login was written is a protocol
/// error; the start-up's one deadline, passed, closes it as `timedOut`.
///
/// **One timer per connection.** The machine asks for one wake-up at the
/// earliest instant anything can happen (a request's deadline, or the oldest
/// request stalling) and moves it only to an earlier instant when a request
/// arrives; a wake-up that comes early for what is left just asks for the
/// next. No timer is scheduled per request.
///
/// **Stall.** When the oldest request has waited past both its own deadline
/// and the stall timeout, the connection is closed: the server hangs or the
/// path to it is gone, and only a new connection can tell.
struct RedisConnectionStateMachine<Promise> {
    typealias RequestID = UInt64

    struct Limits: Sendable {
        /// Requests queued on the connection (sent or held, answered or not yet).
        var maxQueued: Int
        /// Nanoseconds the oldest request may wait beyond its deadline for an answer.
        var stallTimeout: UInt64
    }

    enum Action {
        /// Write the bytes; flush now, or once at the end of this event-loop turn.
        case write([UInt8], flushNow: Bool)
        case succeed(Promise, RESPReply)
        case fail(Promise, RedisClientError)
        /// Give a request's bytes back to the client's outstanding budget.
        case release(bytes: Int)
        /// Arm the connection's one timer at this instant, replacing the armed one.
        case armTimer(at: UInt64)
        case cancelTimer
        /// Whether a `WAIT` holds new requests back (the pool sends elsewhere first).
        case setHolding(Bool)
        /// The start-up is over: the server answered `PING`; the connection may be handed out.
        case loggedIn
        /// Close the channel; every request has been failed already, and ``closeReason`` says why.
        case closeChannel
    }

    private enum Phase {
        /// The channel is not active yet.
        case connecting
        /// Active; the TLS handshake (and its name check) not yet done.
        case tlsHandshake
        /// The start-up commands are written; these still wait for their replies, in order.
        case loggingIn(FIFO<RedisConnectionStartup.Step>)
        case ready
    }

    private struct Request {
        let id: RequestID
        /// nil for a prelude (`ASKING`), whose reply nobody awaits.
        let promise: Promise?
        /// Bytes held in the client's budget; nil for what the budget does not count (a prelude, the client's own commands).
        let budgetedBytes: Int?
        var sentAt: UInt64
        let deadline: UInt64
        let afterReply: AfterReply
        /// The reply that led to this follow-up (`SET`'s `OK` before `WAIT`).
        var firstReply: RESPReply?
        /// Its caller has its answer already (failed by deadline or cancellation).
        var isSettled = false
    }

    /// A request not yet written: the start-up is not over, or a `WAIT` is out on this connection.
    private struct Held {
        var request: Request
        let bytes: [UInt8]
        let hasPrelude: Bool
    }

    let limits: Limits
    /// Names the server in messages ("redis 10.0.0.5:6379").
    let endpointDescription: String
    let startup: RedisConnectionStartup
    /// Closed is ``closeReason`` set, whatever the phase was.
    private var phase = Phase.connecting
    private var pending = FIFO<Request>()
    private var held = FIFO<Held>()
    /// `WAIT`s written and not yet answered.
    private var waitsOut = 0
    private var armedTimer: UInt64?
    /// Set once, by the first reason the connection closed for.
    private(set) var closeReason: RedisClientError?

    init(limits: Limits, endpointDescription: String, startup: RedisConnectionStartup) {
        self.limits = limits
        self.endpointDescription = endpointDescription
        self.startup = startup
    }

    /// Whether the start-up is over (and the connection not closed).
    var isReady: Bool {
        if closeReason == nil, case .ready = phase { true } else { false }
    }

    /// Requests queued, answered by deadline or not.
    var queuedCount: Int { pending.count + held.count }

    /// The instant the one timer is armed for, if any (for tests).
    var armedTimerInstant: UInt64? { armedTimer }

    // MARK: Events

    /// The channel is active: arm the start-up deadline, then wait for the
    /// TLS handshake or log in at once.
    mutating func connected(now: UInt64, into actions: inout [Action]) {
        guard closeReason == nil, case .connecting = phase else { return }
        armTimer(atOrBefore: startup.deadline, into: &actions)
        if startup.waitsForTLSHandshake {
            phase = .tlsHandshake
        } else {
            logIn(into: &actions)
        }
    }

    /// The TLS handshake completed and the certificate's name was checked: log in.
    mutating func tlsHandshakeCompleted(now: UInt64, into actions: inout [Action]) {
        guard closeReason == nil, case .tlsHandshake = phase else { return }
        logIn(into: &actions)
    }

    /// A caller's request: `command` (after `prelude`, in the same write, so
    /// nothing comes between them) to be answered by `deadline`.
    mutating func enqueue(
        _ command: [UInt8],
        id: RequestID,
        promise: Promise,
        budgetedBytes: Int?,
        deadline: UInt64,
        prelude: [UInt8]? = nil,
        afterReply: AfterReply = .nothing,
        now: UInt64,
        into actions: inout [Action]
    ) {
        func refuse(_ error: RedisClientError) {
            actions.append(.fail(promise, error))
            if let budgetedBytes { actions.append(.release(bytes: budgetedBytes)) }
        }
        if let closeReason { return refuse(closeReason) }
        guard deadline > now else { return refuse(timedOut) }
        guard queuedCount + (prelude == nil ? 1 : 2) <= limits.maxQueued else {
            return refuse(
                RedisClientError(
                    .overloaded,
                    "\(limits.maxQueued) requests already wait on the connection to \(endpointDescription)"
                )
            )
        }
        let request = Request(
            id: id,
            promise: promise,
            budgetedBytes: budgetedBytes,
            sentAt: now,
            deadline: deadline,
            afterReply: afterReply
        )
        if waitsOut > 0 || !isReady {
            // Before the login is over nothing but the login may reach the
            // server; a WAIT blocks this connection on the server: what is
            // written now would wait behind it. Hold it here until then.
            held.append(Held(request: request, bytes: (prelude ?? []) + command, hasPrelude: prelude != nil))
        } else {
            if let prelude {
                pending.append(Request(id: id, promise: nil, budgetedBytes: nil, sentAt: now, deadline: deadline, afterReply: .nothing))
                pending.append(request)
                actions.append(.write(prelude + command, flushNow: false))
            } else {
                pending.append(request)
                actions.append(.write(command, flushNow: false))
            }
        }
        armTimer(atOrBefore: deadline, into: &actions)
    }

    /// One decoded reply: it answers the oldest request.
    mutating func received(_ reply: RESPReply, now: UInt64, into actions: inout [Action]) {
        guard closeReason == nil else { return }
        switch phase {
        case .connecting, .tlsHandshake:
            return close(
                RedisClientError(.protocolError, "\(endpointDescription) sent a reply before the login was sent"),
                into: &actions
            )
        case .loggingIn(var steps):
            let step = steps.popFirst()!
            if let refusal = step.refusal(of: reply, endpointDescription: endpointDescription, hasPassword: startup.hasPassword) {
                return close(refusal, into: &actions)
            }
            if steps.isEmpty {
                phase = .ready
                actions.append(.loggedIn)
                writeHeld(now: now, into: &actions)
            } else {
                phase = .loggingIn(steps)
            }
            return
        case .ready:
            break
        }
        guard let request = pending.popFirst() else {
            return close(RedisClientError(.protocolError, "\(endpointDescription) sent a reply no request asked for"), into: &actions)
        }
        if let first = request.firstReply {
            waitsOut -= 1
            complete(request, .success(.array([first, reply])), into: &actions)
            if waitsOut == 0 {
                actions.append(.setHolding(false))
                writeHeld(now: now, into: &actions)
            }
        } else if case .waitForReplicas(let replicas) = request.afterReply, reply.isOK {
            sendWait(replicas: replicas, after: reply, for: request, now: now, into: &actions)
        } else {
            complete(request, .success(reply), into: &actions)
        }
        if case .error(let message) = reply, message.starts(with: "READONLY".utf8) {
            // After a failover the old primary is a replica: only a new
            // connection can reach the new one (DNS, a virtual address, or the
            // sentinels' new answer).
            close(
                RedisClientError(.connectionClosed, "\(endpointDescription) is a read-only replica; closed to reconnect"),
                into: &actions
            )
        }
    }

    /// The one timer fired: fail what passed its deadline, close a stalled
    /// connection, and ask for the next wake-up.
    mutating func timerFired(now: UInt64, into actions: inout [Action]) {
        armedTimer = nil
        guard closeReason == nil else { return }
        let timedOut = self.timedOut
        var next: UInt64?
        if !isReady {
            // The start-up's one deadline covers the TLS handshake and the login.
            if startup.deadline <= now { return close(timedOut, into: &actions) }
            next = startup.deadline
        }
        for index in pending.indices where !pending[index].isSettled {
            if pending[index].deadline <= now {
                Self.settle(&pending[index], with: timedOut, into: &actions)
            } else {
                next = min(next ?? .max, pending[index].deadline)
            }
        }
        for index in held.indices where !held[index].request.isSettled {
            if held[index].request.deadline <= now {
                Self.settle(&held[index].request, with: timedOut, into: &actions)
            } else {
                next = min(next ?? .max, held[index].request.deadline)
            }
        }
        if let oldest = pending.first {
            let stallsAt = stallInstant(of: oldest)
            if stallsAt <= now {
                return close(
                    RedisClientError(
                        .timedOut,
                        "\(endpointDescription) has not answered for \((now - oldest.sentAt) / 1_000_000) ms; connection closed"
                    ),
                    into: &actions
                )
            }
            next = min(next ?? .max, stallsAt)
        }
        if let next { armTimer(atOrBefore: next, into: &actions) }
    }

    /// The caller of request `id` stopped waiting (its task was cancelled):
    /// it gets `cancelled` now; the request stays queued until its reply, so
    /// the replies after it still meet their own requests, and a `WAIT` it
    /// asked for is not sent.
    mutating func cancel(_ id: RequestID, into actions: inout [Action]) {
        let error = RedisClientError(.cancelled, "the caller stopped waiting for \(endpointDescription)")
        for index in pending.indices where pending[index].id == id && !pending[index].isSettled && pending[index].promise != nil {
            Self.settle(&pending[index], with: error, into: &actions)
            return
        }
        for index in held.indices where held[index].request.id == id && !held[index].request.isSettled {
            Self.settle(&held[index].request, with: error, into: &actions)
            return
        }
    }

    /// The channel closed, failed, or its handler was removed: every request fails with the first reason.
    mutating func closed(_ reason: RedisClientError, into actions: inout [Action]) {
        close(reason, into: &actions)
    }

    // MARK: Steps

    private func stallInstant(of request: Request) -> UInt64 {
        let stall = request.sentAt.addingReportingOverflow(limits.stallTimeout)
        return max(stall.overflow ? .max : stall.partialValue, request.deadline)
    }

    private var timedOut: RedisClientError {
        RedisClientError(.timedOut, "no answer from \(endpointDescription) within the deadline")
    }

    private mutating func armTimer(atOrBefore instant: UInt64, into actions: inout [Action]) {
        if let armedTimer, armedTimer <= instant { return }
        armedTimer = instant
        actions.append(.armTimer(at: instant))
    }

    /// The caller gets `error` now; the request stays queued.
    private static func settle(_ request: inout Request, with error: RedisClientError, into actions: inout [Action]) {
        request.isSettled = true
        if let promise = request.promise { actions.append(.fail(promise, error)) }
    }

    /// The request leaves the queue: its caller gets `result` unless it has
    /// its answer already, and its bytes go back to the budget.
    private func complete(_ request: Request, _ result: Result<RESPReply, RedisClientError>, into actions: inout [Action]) {
        if !request.isSettled, let promise = request.promise {
            switch result {
            case .success(let reply): actions.append(.succeed(promise, reply))
            case .failure(let error): actions.append(.fail(promise, error))
            }
        }
        if let bytes = request.budgetedBytes { actions.append(.release(bytes: bytes)) }
    }

    /// `OK` arrived for a request that wants `WAIT`: send it now, on this
    /// connection, and hold new requests until it answers.
    private mutating func sendWait(
        replicas: Int,
        after reply: RESPReply,
        for request: Request,
        now: UInt64,
        into actions: inout [Action]
    ) {
        let milliseconds = request.deadline > now ? (request.deadline - now) / 1_000_000 : 0
        guard milliseconds >= 1, !request.isSettled else {
            return complete(
                request,
                .failure(
                    RedisClientError(
                        .timedOut,
                        "\(endpointDescription) accepted the write with under 1 ms left for WAIT; not sent (WAIT n 0 blocks forever)"
                    )
                ),
                into: &actions
            )
        }
        var wait = Request(
            id: request.id,
            promise: request.promise,
            budgetedBytes: request.budgetedBytes,
            sentAt: now,
            deadline: request.deadline,
            afterReply: .nothing
        )
        wait.firstReply = reply
        pending.append(wait)
        waitsOut += 1
        actions.append(.setHolding(true))
        actions.append(.write(RESPCommand("WAIT", String(replicas), String(milliseconds)).encoded(), flushNow: true))
    }

    /// The start-up is over, or WAIT answered and no other is out: write what
    /// was held, skipping what its deadline or its caller already settled.
    private mutating func writeHeld(now: UInt64, into actions: inout [Action]) {
        while waitsOut == 0, var next = held.popFirst() {
            if next.request.isSettled {
                if let bytes = next.request.budgetedBytes { actions.append(.release(bytes: bytes)) }
                continue
            }
            if next.hasPrelude {
                pending.append(
                    Request(
                        id: next.request.id,
                        promise: nil,
                        budgetedBytes: nil,
                        sentAt: now,
                        deadline: next.request.deadline,
                        afterReply: .nothing
                    )
                )
            }
            next.request.sentAt = now
            pending.append(next.request)
            actions.append(.write(next.bytes, flushNow: false))
        }
    }

    /// The channel is active (and its TLS done): the start-up commands, in one write.
    private mutating func logIn(into actions: inout [Action]) {
        var bytes: [UInt8] = []
        var steps = FIFO<RedisConnectionStartup.Step>()
        for step in startup.steps {
            step.command.encode(into: &bytes)
            steps.append(step)
        }
        phase = .loggingIn(steps)
        actions.append(.write(bytes, flushNow: true))
    }

    /// Fails every queued request with the first reason and closes the channel.
    private mutating func close(_ reason: RedisClientError, into actions: inout [Action]) {
        guard closeReason == nil else { return }
        closeReason = reason
        if armedTimer != nil {
            armedTimer = nil
            actions.append(.cancelTimer)
        }
        while let request = pending.popFirst() {
            complete(request, .failure(reason), into: &actions)
        }
        while let next = held.popFirst() {
            complete(next.request, .failure(reason), into: &actions)
        }
        if waitsOut > 0 { actions.append(.setHolding(false)) }
        waitsOut = 0
        actions.append(.closeChannel)
    }
}

/// First in, first out over an array: O(1) at both ends, amortized, with
/// in-place access for the timer's scan. Popped slots are cleared at once so
/// a promise is not kept alive by the buffer.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }
    var indices: Range<Int> { head..<storage.count }

    subscript(index: Int) -> Element {
        get { storage[index]! }
        set { storage[index] = newValue }
    }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
