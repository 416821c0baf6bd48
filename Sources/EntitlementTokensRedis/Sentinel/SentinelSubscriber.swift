internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import RedisRESP
internal import Synchronization

/// The `+switch-master` subscription of one ``SentinelRouter`` (docs/DESIGN.md#high-availability):
/// one connection to one sentinel at a time, started at the sentinel that
/// answered last; when it is lost or cannot be made, the next sentinel, after
/// a backoff of ``retryDelay`` doubling per consecutive loss up to
/// ``maximumBackoff``. Every sentinel unreachable: it keeps trying them in
/// turn at most every ``maximumBackoff`` while the router's poll carries on.
///
/// It never acts on a message's addresses: it tells its owner which sentinel
/// spoke, and the owner asks and confirms (`ROLE`) as in every discovery.
final class SentinelSubscriber: Sendable {
    static let retryDelay = TimeAmount.milliseconds(100)
    static let maximumBackoff = TimeAmount.seconds(2)

    /// What the subscription tells its owner; the owner answers false once it
    /// is gone, which ends the subscription.
    enum Notice: Sendable, Equatable {
        /// Subscribed to sentinel `index`; `again` after an earlier subscription
        /// was lost (a switch in between was not heard: time to ask).
        case subscribed(sentinel: Int, again: Bool)
        /// Sentinel `index` announced that our primary moved.
        case switchMaster(sentinel: Int)
    }

    private let sentinels: [RedisEndpoint]
    private let primaryName: [UInt8]
    private let configuration: RedisClientConfiguration
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private let state = Mutex(State())

    private struct State {
        var subscribedSentinel: Int?
        var switchMessages = 0
        var lastFailure: RedisClientError?
    }

    init(
        sentinels: [RedisEndpoint],
        primaryName: String,
        configuration: RedisClientConfiguration,
        group: any EventLoopGroup,
        sslContext: NIOSSLContext?
    ) {
        precondition(!sentinels.isEmpty, "Sentinel needs sentinels")
        self.sentinels = sentinels
        self.primaryName = Array(primaryName.utf8)
        self.configuration = configuration
        self.group = group
        self.sslContext = sslContext
    }

    /// The sentinel the subscription is confirmed on now (nil between subscriptions).
    var subscribedSentinel: Int? { state.withLock { $0.subscribedSentinel } }
    /// `+switch-master` messages for our primary received since start.
    var switchMessages: Int { state.withLock { $0.switchMessages } }
    /// Why the last subscription ended or could not be made.
    var lastFailure: RedisClientError? { state.withLock { $0.lastFailure } }

    /// Subscribes, from sentinel `first`, until the task is cancelled or `notify` answers false.
    func run(from first: Int, notify: @escaping @Sendable (Notice) -> Bool) async {
        var index = first % sentinels.count
        var losses = 0
        var subscribedBefore = false
        while !Task.isCancelled {
            let (events, continuation) = AsyncStream.makeStream(
                of: SentinelSubscriptionEvent.self,
                bufferingPolicy: .bufferingNewest(8)
            )
            var channel: (any Channel)?
            do {
                channel = try await connect(to: sentinels[index], events: continuation).get()
            } catch {
                continuation.finish()
                record(
                    RedisClientError(
                        .connectionFailed,
                        "cannot subscribe to sentinel \(sentinels[index]): \(ConnectFailureWords.describe(error))"
                    )
                )
            }
            if let channel {
                // Ends with the stream (after `.closed`), or at once when the task is cancelled.
                for await event in events {
                    let notice: Notice
                    switch event {
                    case .subscribed:
                        losses = 0
                        state.withLock { $0.subscribedSentinel = index }
                        notice = .subscribed(sentinel: index, again: subscribedBefore)
                        subscribedBefore = true
                    case .switchMaster:
                        state.withLock { $0.switchMessages += 1 }
                        notice = .switchMaster(sentinel: index)
                    case .closed(let error):
                        record(error)
                        continue
                    }
                    guard notify(notice) else {
                        channel.close(promise: nil)
                        record(nil)
                        return
                    }
                }
                // Awaited: a cancelled run (the client's `Service.run()` ending) leaves no connection behind.
                try? await channel.close()
                state.withLock { $0.subscribedSentinel = nil }
            }
            guard !Task.isCancelled else { break }
            losses += 1
            index = (index + 1) % sentinels.count
            let delay = min(Self.retryDelay.nanoseconds << min(losses - 1, 16), Self.maximumBackoff.nanoseconds)
            try? await Task.sleep(nanoseconds: UInt64(delay))
        }
        state.withLock { $0.subscribedSentinel = nil }
    }

    private func record(_ failure: RedisClientError?) {
        state.withLock { state in
            if let failure { state.lastFailure = failure }
            state.subscribedSentinel = nil
        }
    }

    /// Connects to `endpoint` as every sentinel connection does (the connect
    /// timeout, TLS checked by the same rule), with the subscription's handler.
    private func connect(
        to endpoint: RedisEndpoint,
        events: AsyncStream<SentinelSubscriptionEvent>.Continuation
    ) -> EventLoopFuture<any Channel> {
        let login = endpoint.password.map { password in
            endpoint.username.map { RESPCommand("AUTH", $0, password) } ?? RESPCommand("AUTH", password)
        }
        let machine = SentinelSubscriptionStateMachine(
            primaryName: primaryName,
            login: login,
            subscribeTimeout: UInt64(configuration.connectTimeout.timeAmount.nanoseconds),
            // A PING a stall timeout apart: a sentinel gone silent is left as soon as a request would be.
            keepAliveInterval: UInt64(configuration.stalledConnectionTimeout.timeAmount.nanoseconds),
            endpointDescription: "\(endpoint.host):\(endpoint.port)"
        )
        let replyLimits = configuration.replyLimits
        let sslContext = sslContext
        let deliver: @Sendable (SentinelSubscriptionEvent) -> Void = { event in
            events.yield(event)
            if case .closed = event { events.finish() }
        }
        return ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout.timeAmount)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext { try RedisConnection.addTLSHandlers(to: channel.pipeline.syncOperations, sslContext, endpoint) }
                    try channel.pipeline.syncOperations.addHandler(
                        SentinelSubscriptionHandler(machine: machine, replyLimits: replyLimits, deliver: deliver)
                    )
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
    }
}
