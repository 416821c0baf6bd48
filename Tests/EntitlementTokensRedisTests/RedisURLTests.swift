import Foundation
import RedisRESP
import Testing

@testable import EntitlementTokensRedis

@Suite("Redis: Sentinel and Cluster URLs")
struct RedisURLTests {
    static func address(_ host: String, _ port: Int) -> RedisNodeAddress { RedisNodeAddress(host: host, port: port)! }

    @Test("the forms parse")
    func forms() throws {
        var configuration = try RedisClientConfiguration(url: "redis-sentinel://10.0.0.7,10.0.0.8:26380/2#mymaster")
        #expect(
            configuration.topology
                == .sentinel(
                    RedisSentinelSettings(
                        sentinels: [Self.address("10.0.0.7", 26379), Self.address("10.0.0.8", 26380)],
                        primaryName: "mymaster"
                    )
                )
        )
        #expect(configuration.endpoint.database == 2 && !configuration.endpoint.usesTLS)
        #expect(configuration.target == "redis-sentinel mymaster via 10.0.0.7:26379,10.0.0.8:26380")

        configuration = try RedisClientConfiguration(
            url: "rediss-sentinel://gate:data%40pw@[::1]:26379?sentinel-user=s&sentinel-password=sp%26w&tls-server-name=redis.internal#primary-1"
        )
        guard case .sentinel(let settings) = configuration.topology else {
            Issue.record("not sentinel")
            return
        }
        #expect(settings.username == "s" && settings.password == "sp&w")
        #expect(configuration.endpoint.username == "gate" && configuration.endpoint.password == "data@pw")
        #expect(configuration.endpoint.usesTLS && configuration.endpoint.tlsServerName == "redis.internal")

        configuration = try RedisClientConfiguration(url: "redis-cluster://:pw@127.0.0.1:7000,127.0.0.1:7001")
        #expect(configuration.topology == .cluster(seeds: [Self.address("127.0.0.1", 7000), Self.address("127.0.0.1", 7001)]))
        #expect(configuration.endpoint.password == "pw")
        #expect(configuration.target == "redis-cluster via 127.0.0.1:7000,127.0.0.1:7001")
        configuration = try RedisClientConfiguration(url: "rediss-cluster://h")
        #expect(configuration.topology == .cluster(seeds: [Self.address("h", 6379)]) && configuration.endpoint.usesTLS)
        // The CA in the URL (the gate's one way to trust a private CA); not twice.
        configuration = try RedisClientConfiguration(url: "rediss-cluster://h?tls-ca-file=/etc/redis/ca.pem")
        #expect(configuration.trustedCAFile == "/etc/redis/ca.pem")
        #expect(throws: RedisClientError(.invalidConfiguration, "")) {
            try RedisClientConfiguration(url: "rediss-sentinel://h?tls-ca-file=/etc/redis/ca.pem#m", trustedCAFile: "/etc/other.pem")
        }
        configuration = try RedisClientConfiguration(url: "redis://h:7/3")
        #expect(configuration.topology == .standalone && configuration.target == "redis h:7/3")
    }

    @Test("password files: absolute, or under CREDENTIALS_DIRECTORY; text loses one newline")
    func passwordFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-url-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "data-secret\n".write(to: directory.appendingPathComponent("redis"), atomically: true, encoding: .utf8)
        try "sentinel-secret\r\n".write(to: directory.appendingPathComponent("sentinel"), atomically: true, encoding: .utf8)
        let configuration = try RedisClientConfiguration(
            url: "redis-sentinel://h?password-file=redis&sentinel-password-file=\(directory.path)/sentinel#m",
            credentialsDirectory: directory.path
        )
        #expect(configuration.endpoint.password == "data-secret")
        guard case .sentinel(let settings) = configuration.topology else {
            Issue.record("not sentinel")
            return
        }
        #expect(settings.password == "sentinel-secret")
        let withCA = try RedisClientConfiguration(url: "rediss://h?tls-ca-file=ca.pem", credentialsDirectory: directory.path)
        #expect(withCA.trustedCAFile == directory.path + "/ca.pem")
        #expect(throws: RedisClientError(.invalidConfiguration, "")) {
            try RedisClientConfiguration(url: "redis://h?password-file=missing", credentialsDirectory: directory.path)
        }
    }

    @Test(
        "malformed forms are refused, and no message holds a password",
        arguments: [
            "redis-sentinel://h:26379", "redis-sentinel://h#", "redis-sentinel://h#a b", "redis-cluster://h/1",
            "redis-cluster://h#m", "redis://h,i", "redis://h#m", "redis://:pw@h?password-file=x", "redis-cluster://h,h",
            "redis://h?unknown=1", "redis://h?password-file=", "redis://h?tls-server-name=x", "redis-cluster://h?sentinel-password=pw",
            "redis-sentinel://h?sentinel-password=pw&sentinel-password-file=f#m", "redis-sentinel://h:0#m", "redis-cluster://,h",
            "redis-sentinel://:pw@h?sentinel-password=pw&sentinel-password=pw#m", "redis-sentinel://h\u{1b}[31m#m",
            "redis://h?tls-ca-file=/etc/ca.pem", "redis-sentinel://h?tls-ca-file=/etc/ca.pem#m", "rediss://h?tls-ca-file=",
        ]
    )
    func refusals(url: String) {
        do {
            _ = try RedisClientConfiguration(url: url)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.code == .invalidURL || error.code == .invalidConfiguration)
            #expect(!error.message.contains("pw"), "\(error.message)")
            #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 }, "\(error.message)")
        }
    }
}

@Suite("Redis: topology replies")
struct TopologyReplyTests {
    static func bulk(_ text: String) -> RESPReply { .bulkString(Array(text.utf8)) }

    @Test("hash slots: Redis's published values and hash tags")
    func hashSlots() {
        // From the Redis Cluster specification and `CLUSTER KEYSLOT`.
        #expect(RedisHashSlot.slot(of: Array("123456789".utf8)) == 0x31C3 & 16383)
        #expect(RedisHashSlot.slot(of: Array("foo".utf8)) == 12182)
        #expect(RedisHashSlot.slot(of: Array("{user1000}.following".utf8)) == RedisHashSlot.slot(of: Array("user1000".utf8)))
        #expect(RedisHashSlot.slot(of: Array("foo{}{bar}".utf8)) == RedisHashSlot.slot(of: Array("foo{}{bar}".utf8)[...]))
        #expect(RedisHashSlot.slot(of: Array("foo{{bar}}zap".utf8)) == RedisHashSlot.slot(of: Array("{bar".utf8)))
        #expect(RedisHashSlot.slot(of: Array("".utf8)) == 0)
    }

    @Test("sentinel, ROLE and redirections")
    func sentinelAndRedirects() throws {
        #expect(
            try SentinelReply.primaryAddress(.array([Self.bulk("10.0.0.5"), Self.bulk("6379")])) == RedisNodeAddress(host: "10.0.0.5", port: 6379)
        )
        #expect(try SentinelReply.primaryAddress(.null) == nil)
        for bad: RESPReply in [
            .array([Self.bulk("h")]), .array([Self.bulk("h"), Self.bulk("0")]), .array([Self.bulk("h p"), Self.bulk("1")]),
            .array([Self.bulk("h"), Self.bulk("+1")]), .integer(1), .array([Self.bulk("h"), .integer(6379)]),
        ] {
            #expect(throws: RedisReplyShapeError.self) { try SentinelReply.primaryAddress(bad) }
        }
        #expect(try RedisRole(roleReply: .array([Self.bulk("master"), .integer(0), .array([])])) == .primary)
        #expect(try RedisRole(roleReply: .array([Self.bulk("slave"), Self.bulk("h")])) == .replica)
        #expect(throws: RedisReplyShapeError.self) { try RedisRole(roleReply: .array([])) }
        let moved = try #require(try ClusterRedirect(errorReply: Array("MOVED 3999 127.0.0.1:6381".utf8)))
        #expect(moved == ClusterRedirect(kind: .moved, slot: 3999, host: "127.0.0.1", port: 6381))
        let ask = try #require(try ClusterRedirect(errorReply: Array("ASK 1 :7000".utf8)))
        #expect(
            ask.host == nil && ask.address(answeredBy: RedisNodeAddress(host: "10.1.1.1", port: 1)!) == RedisNodeAddress(host: "10.1.1.1", port: 7000)
        )
        #expect(try ClusterRedirect(errorReply: Array("MOVED 1 [::1]:7000".utf8))?.host == "::1")
        #expect(try ClusterRedirect(errorReply: Array("ERR x".utf8)) == nil)
        for bad in ["MOVED 16384 h:1", "MOVED 1 h:0", "MOVED 1 h", "ASK x h:1", "MOVED 1 h:1 extra", "MOVED  h:1", "MOVED 1 h\u{7f}:1"] {
            #expect(throws: RedisReplyShapeError.self) { try ClusterRedirect(errorReply: Array(bad.utf8)) }
        }
    }

    @Test("CLUSTER SLOTS and CLUSTER SHARDS read the same topology; overlaps and bad ranges are refused")
    func cluster() throws {
        let a = RedisNodeAddress(host: "10.0.0.1", port: 7000)!
        let b = RedisNodeAddress(host: "10.0.0.2", port: 7001)!
        let topology = try ClusterTopology(ranges: [(0...5460, a), (5461...16383, b)])
        #expect(try ClusterTopology(slotsReply: topology.slotsReply, askedHost: "x") == topology)
        #expect(try ClusterTopology(shardsReply: topology.shardsReply, askedHost: "x") == topology)
        #expect(topology.primary(forSlot: 5460) == a && topology.primary(forSlot: 5461) == b)
        // An empty host is the node asked; '?' leaves the range without an owner.
        let slots: RESPReply = .array([
            .array([.integer(0), .integer(10), .array([Self.bulk(""), .integer(7000), Self.bulk("id")])]),
            .array([.integer(11), .integer(20), .array([Self.bulk("?"), .integer(7001)])]),
        ])
        let read = try ClusterTopology(slotsReply: slots, askedHost: "10.0.0.9")
        #expect(read.primary(forSlot: 3) == RedisNodeAddress(host: "10.0.0.9", port: 7000) && read.primary(forSlot: 11) == nil)
        #expect(read.coveredSlotCount == 11)
        #expect(throws: RedisReplyShapeError.self) { try ClusterTopology(ranges: [(0...10, a), (10...20, b)]) }
        #expect(throws: RedisReplyShapeError.self) {
            try ClusterTopology(slotsReply: .array([.array([.integer(5), .integer(4), .array([Self.bulk("h"), .integer(1)])])]), askedHost: "x")
        }
        #expect(throws: RedisReplyShapeError.self) {
            try ClusterTopology(slotsReply: .array([.array([.integer(0), .integer(16384), .array([Self.bulk("h"), .integer(1)])])]), askedHost: "x")
        }
        // A shard whose primary failed (7.0 says "fail") has no owner; its replica is not guessed.
        let shards: RESPReply = .array([
            .array([
                Self.bulk("slots"), .array([.integer(0), .integer(99)]), Self.bulk("nodes"),
                .array([
                    .array([
                        Self.bulk("port"), .integer(7000), Self.bulk("endpoint"), Self.bulk("10.0.0.1"), Self.bulk("role"), Self.bulk("master"),
                        Self.bulk("health"), Self.bulk("fail"),
                    ]),
                    .array([
                        Self.bulk("port"), .integer(7003), Self.bulk("endpoint"), Self.bulk("10.0.0.4"), Self.bulk("role"), Self.bulk("replica"),
                        Self.bulk("health"), Self.bulk("online"),
                    ]),
                ]),
            ])
        ])
        #expect(try ClusterTopology(shardsReply: shards, askedHost: "x").coveredSlotCount == 0)
        // The TLS forms read tls-port; a cluster without tls-cluster yes names only
        // its plain port, and the reason says which setting is missing.
        do {
            _ = try ClusterTopology(shardsReply: topology.shardsReply, askedHost: "x", tls: true)
            Issue.record("a plain port read as a TLS one")
        } catch {
            #expect(error.message.contains("tls-cluster yes"), "\(error.message)")
        }
    }
}
