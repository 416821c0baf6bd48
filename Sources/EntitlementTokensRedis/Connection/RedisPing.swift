internal import RedisRESP

/// `PING`, answered `PONG`: how the client and the Cluster router ask whether
/// a node can take writes now.
enum RedisPing {
    static let command = RESPCommand("PING").encoded()

    static func expectPong(_ reply: RESPReply) throws(RedisClientError) {
        guard reply == .simpleString(Array("PONG".utf8)) else { throw .notExpected("PING", reply) }
    }
}
