import NIOCore
import NIOEmbedded
import RedisRESP
import Testing

@testable import EntitlementTokensRedis

/// The `+switch-master` subscription (docs/DESIGN.md#high-availability) with no sentinel: the
/// message reading, then the handler and its machine on an `EmbeddedChannel`
/// with time advanced by hand.
@Suite("Redis: the sentinel +switch-master subscription")
struct SentinelSubscriptionTests {
    static let old = RedisNodeAddress(host: "127.0.0.1", port: 6379)!
    static let new = RedisNodeAddress(host: "10.0.0.2", port: 6380)!

    static func message(_ payload: String, channel: String = "+switch-master") -> String {
        "*3\r\n$7\r\nmessage\r\n$\(channel.utf8.count)\r\n\(channel)\r\n$\(payload.utf8.count)\r\n\(payload)\r\n"
    }

    static func reply(_ text: String) throws -> RESPReply {
        var decoder = RESPDecoder()
        decoder.feed(Array(text.utf8))
        return try #require(try decoder.next())
    }

    @Test func theMessageReadsBackAndNamesItsPrimary() throws {
        let announcement = try SentinelSwitchMaster(messageReply: Self.reply(Self.message("mymaster 127.0.0.1 6379 10.0.0.2 6380")))
        #expect(announcement == SentinelSwitchMaster(primaryName: Array("mymaster".utf8), old: Self.old, new: Self.new))
        #expect(try SentinelSwitchMaster(messageReply: announcement.messageReply) == announcement)
        let ipv6 = try SentinelSwitchMaster(messageReply: Self.reply(Self.message("m ::1 1 fe80::1%eth0 65535")))
        #expect(ipv6.new == RedisNodeAddress(host: "fe80::1%eth0", port: 65535))
    }

    @Test(arguments: [
        "mymaster 127.0.0.1 6379 10.0.0.2",  // four words
        "mymaster 127.0.0.1 6379 10.0.0.2 6380 x",  // six
        "mymaster 127.0.0.1 6379 10.0.0.2 0",  // port 0
        "mymaster 127.0.0.1 6379 10.0.0.2 65536",
        "mymaster 127.0.0.1 6379 10.0.0.2 +6380",
        "mymaster 127.0.0.1 6379 10.0.0.2  6380",  // two spaces: an empty word
        " 127.0.0.1 6379 10.0.0.2 6380 ",
        "mymaster 127.0.0.1 6379 10/0/0/2 6380",  // not a host
    ])
    func aMalformedPayloadIsAnError(_ payload: String) throws {
        #expect(throws: RedisReplyShapeError.self) { try SentinelSwitchMaster(messageReply: Self.reply(Self.message(payload))) }
    }

    @Test func otherShapesAreErrors() throws {
        for text in [
            Self.message("mymaster 127.0.0.1 6379 10.0.0.2 6380", channel: "+sdown"),
            "*3\r\n$8\r\npmessage\r\n$1\r\nx\r\n$1\r\ny\r\n",
            "*2\r\n$7\r\nmessage\r\n$14\r\n+switch-master\r\n",
            "*3\r\n+message\r\n$14\r\n+switch-master\r\n$1\r\nx\r\n",
            "$7\r\nmessage\r\n",
        ] {
            #expect(throws: RedisReplyShapeError.self) { try SentinelSwitchMaster(messageReply: Self.reply(text)) }
        }
    }

    /// The handler on an embedded channel, every event it delivered.
    final class Subscription {
        let channel: EmbeddedChannel
        let handler: SentinelSubscriptionHandler
        private let box: Box
        private final class Box { var events: [SentinelSubscriptionEvent] = [] }
        var delivered: [SentinelSubscriptionEvent] { box.events }
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init(password: String? = nil, limits: RESPLimits = .default) throws {
            let machine = SentinelSubscriptionStateMachine(
                primaryName: Array("mymaster".utf8),
                login: password.map { RESPCommand("AUTH", $0) },
                subscribeTimeout: 1_000_000_000,
                keepAliveInterval: 1_000_000_000,
                endpointDescription: "127.0.0.1:26379"
            )
            let box = Box()
            let handler = SentinelSubscriptionHandler(machine: machine, replyLimits: limits) { box.events.append($0) }
            let channel = EmbeddedChannel(handler: handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 26379)).wait()
            self.box = box
            self.handler = handler
            self.channel = channel
        }

        func written() throws -> String {
            loop.run()
            return try channel.outboundText()
        }

        /// Bytes from the sentinel, one at a time (the decoder must not care how they are cut).
        func receive(_ text: String, byteByByte: Bool = false) throws {
            guard channel.isActive else { return }
            if byteByByte {
                for byte in text.utf8 where channel.isActive {
                    try channel.writeInbound(ByteBuffer(bytes: [byte]))
                }
            } else {
                try channel.writeInbound(ByteBuffer(string: text))
            }
        }

        func subscribe() throws {
            #expect(try written() == "*2\r\n$9\r\nSUBSCRIBE\r\n$14\r\n+switch-master\r\n")
            try receive("*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n")
            #expect(delivered == [.subscribed])
        }

        var closedCode: RedisClientError.Code? {
            if case .closed(let error) = delivered.last { error.code } else { nil }
        }
    }

    @Test func onlyOurPrimarysSwitchIsDelivered() throws {
        let subscription = try Subscription()
        try subscription.subscribe()
        try subscription.receive(Self.message("othermaster 127.0.0.1 7000 127.0.0.1 7001"))
        #expect(subscription.delivered == [.subscribed], "another name is ignored")
        #expect(subscription.handler.otherNames == 1)
        // "mymaster2" and "mymaste" are other names too: the name is compared whole.
        try subscription.receive(Self.message("mymaster2 127.0.0.1 7000 127.0.0.1 7001") + Self.message("mymaste 127.0.0.1 7000 127.0.0.1 7001"))
        #expect(subscription.handler.otherNames == 3)
        try subscription.receive(Self.message("mymaster 127.0.0.1 6379 10.0.0.2 6380"), byteByByte: true)
        #expect(
            subscription.delivered == [
                .subscribed, .switchMaster(SentinelSwitchMaster(primaryName: Array("mymaster".utf8), old: Self.old, new: Self.new)),
            ]
        )
        #expect(subscription.channel.isActive, "a subscription stays open after a message")
    }

    @Test func theSentinelsPasswordGoesFirstInTheSameWrite() throws {
        let subscription = try Subscription(password: "sentinel-pw")
        #expect(try subscription.written() == "*2\r\n$4\r\nAUTH\r\n$11\r\nsentinel-pw\r\n*2\r\n$9\r\nSUBSCRIBE\r\n$14\r\n+switch-master\r\n")
        try subscription.receive("+OK\r\n*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n")
        #expect(subscription.delivered == [.subscribed])

        let refused = try Subscription(password: "hunter2")
        _ = try refused.written()
        try refused.receive("-WRONGPASS invalid username-password pair\r\n-NOAUTH Authentication required.\r\n")
        #expect(refused.closedCode == .authenticationFailed)
        #expect(!refused.channel.isActive)
        if case .closed(let error) = refused.delivered.last { #expect(!error.message.contains("hunter2")) }

        let noPassword = try Subscription()
        _ = try noPassword.written()
        try noPassword.receive("-NOAUTH Authentication required.\r\n")
        #expect(noPassword.closedCode == .authenticationFailed)
    }

    /// A malformed push drops the connection (the owner subscribes again); never a crash.
    @Test(arguments: [
        (SentinelSubscriptionTests.message("mymaster 127.0.0.1 6379 10.0.0.2"), RedisClientError.Code.unexpectedReply),
        (SentinelSubscriptionTests.message("othermaster 127.0.0.1 6379 10.0.0.2 0"), .unexpectedReply),  // malformed even for another name
        (SentinelSubscriptionTests.message("mymaster 127.0.0.1 6379 10.0.0.2 6380", channel: "+sdown"), .unexpectedReply),
        ("+OK\r\n", .unexpectedReply),
        ("-ERR something\r\n", .unexpectedReply),
        ("*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n", .unexpectedReply),
        ("%1\r\n", .protocolError),  // RESP3 on a RESP2 connection
        ("*3\r\n$7\r\nmessage\r\n$14\r\n+switch-master\r\n$99999999\r\n", .protocolError),  // past the bulk limit
        ("*99999\r\n", .protocolError),  // past the array limit
        ("x\r\n", .protocolError),
    ])
    func aMalformedPushClosesTheSubscription(_ bytes: String, _ code: RedisClientError.Code) throws {
        let subscription = try Subscription()
        try subscription.subscribe()
        try subscription.receive(bytes)
        #expect(subscription.closedCode == code, "\(subscription.delivered)")
        #expect(!subscription.channel.isActive)
        try subscription.receive(Self.message("mymaster 127.0.0.1 6379 10.0.0.2 6380"))
        #expect(subscription.delivered.filter { if case .switchMaster = $0 { true } else { false } }.isEmpty)
    }

    @Test func aReplyPastTheSizeLimitClosesIt() throws {
        let subscription = try Subscription(limits: RESPLimits(maxReplyBytes: 64))
        try subscription.subscribe()
        try subscription.receive(Self.message("mymaster 127.0.0.1 6379 10.0.0.2 6380" + String(repeating: " ", count: 40)))
        #expect(subscription.closedCode == .protocolError)
    }

    @Test func notSubscribedInTimeIsClosed() throws {
        let subscription = try Subscription()
        _ = try subscription.written()
        subscription.loop.advanceTime(by: .milliseconds(999))
        #expect(subscription.delivered.isEmpty && subscription.channel.isActive)
        subscription.loop.advanceTime(by: .milliseconds(1))
        #expect(subscription.closedCode == .timedOut)
        #expect(!subscription.channel.isActive)
    }

    @Test func aSilentSentinelIsLeftAfterOneUnansweredPing() throws {
        let subscription = try Subscription()
        try subscription.subscribe()
        subscription.loop.advanceTime(by: .seconds(1))
        #expect(try subscription.written() == "*1\r\n$4\r\nPING\r\n")
        try subscription.receive("*2\r\n$4\r\npong\r\n$0\r\n\r\n")
        subscription.loop.advanceTime(by: .seconds(1))
        #expect(try subscription.written() == "*1\r\n$4\r\nPING\r\n", "answered: another PING a keep-alive later")
        #expect(subscription.channel.isActive)
        subscription.loop.advanceTime(by: .milliseconds(999))
        #expect(subscription.channel.isActive)
        subscription.loop.advanceTime(by: .milliseconds(1))
        #expect(subscription.closedCode == .timedOut)
        #expect(!subscription.channel.isActive)
    }

    @Test func aClosedConnectionIsTheLastEvent() throws {
        let subscription = try Subscription()
        try subscription.subscribe()
        try subscription.channel.close().wait()
        #expect(subscription.closedCode == .connectionClosed)
        #expect(subscription.delivered.count == 2, "one .closed, however the close is seen")
    }
}
