import RedisRESP

/// What must hold for the readings of the replies that say where to write
/// (`SENTINEL get-master-addr-by-name`, a `+switch-master` message, `ROLE`,
/// `MOVED`/`ASK`, `CLUSTER SLOTS`, `CLUSTER SHARDS`), whatever a server, or someone between it and
/// us, sends (docs/DESIGN.md#trust-in-sentinels: they redirect every write):
///
/// - no reading traps, whatever the reply;
/// - an address read is plausible (a host of name or IP-literal bytes, a port 1…65535);
/// - a redirection read formats back to a text that reads back the same;
/// - a topology read is a partition: every owned slot's owner is among the
///   primaries, every primary owns a slot, the ranges cover exactly the owned
///   slots, and the topology written as `CLUSTER SLOTS` and as `CLUSTER
///   SHARDS` reads back equal;
/// - `RedisHashSlot` agrees, on every string in the reply, with a bitwise
///   CRC16 and hash-tag reading written here independently.
///
/// Input: a RESP2 byte stream; each of its first 8 replies goes through every reading.
public enum TopologyOracle {
    public static let target = "FuzzTopology"

    public static func check(_ input: [UInt8]) {
        var decoder = RESPDecoder()
        decoder.feed(input)
        var replies: [RESPReply] = []
        while replies.count < 8, let reply = try? decoder.next() { replies.append(reply) }
        for reply in replies { checkReply(reply) }
    }

    static func checkReply(_ reply: RESPReply) {
        if let address = try? SentinelReply.primaryAddress(reply) {
            checkAddress(address, "get-master-addr-by-name")
            if (try? SentinelReply.primaryAddress(SentinelReply.encode(primaryAddress: address))) != .some(address) {
                oracleFailure(target, "the sentinel address \(address) does not read back")
            }
        }
        if let announcement = try? SentinelSwitchMaster(messageReply: reply) {
            checkAddress(announcement.old, "+switch-master")
            checkAddress(announcement.new, "+switch-master")
            if (try? SentinelSwitchMaster(messageReply: announcement.messageReply)) != .some(announcement) {
                oracleFailure(target, "the +switch-master message \(announcement.old) -> \(announcement.new) does not read back")
            }
        }
        if let role = try? RedisRole(roleReply: reply) {
            guard case .array(let elements) = reply, elements.first?.stringValue == role.rawValue else {
                oracleFailure(target, "ROLE read \(role) from \(reply.shapeSummary)")
            }
        }
        if case .error(let message) = reply, let redirect = try? ClusterRedirect(errorReply: message) {
            guard (0..<16384).contains(redirect.slot), (1...65535).contains(redirect.port),
                redirect.host.map(RedisNodeAddress.isPlausibleHost) ?? true
            else {
                oracleFailure(target, "an implausible redirection \(redirect) from '\(escaped(message))'")
            }
            let again = try? ClusterRedirect(errorReply: Array(redirect.errorText.utf8))
            if again != .some(redirect) {
                oracleFailure(
                    target,
                    "the redirection '\(escaped(message))' formats as '\(redirect.errorText)', which reads back as \(String(describing: again))"
                )
            }
        }
        if let topology = try? ClusterTopology(slotsReply: reply, askedHost: "10.0.0.1") { checkTopology(topology, "CLUSTER SLOTS") }
        for tls in [false, true] {
            if let topology = try? ClusterTopology(shardsReply: reply, askedHost: "10.0.0.1", tls: tls) { checkTopology(topology, "CLUSTER SHARDS") }
        }
        forEachString(in: reply) { bytes in
            let slot = RedisHashSlot.slot(of: bytes)
            let reference = referenceSlot(bytes)
            if slot != reference {
                oracleFailure(target, "slot of '\(escaped(bytes))': \(slot), the reference says \(reference)")
            }
        }
    }

    static func checkAddress(_ address: RedisNodeAddress, _ what: String) {
        guard RedisNodeAddress.isPlausibleHost(address.host), (1...65535).contains(address.port) else {
            oracleFailure(target, "\(what) read an implausible address \(escaped(address.host)):\(address.port)")
        }
    }

    static func checkTopology(_ topology: ClusterTopology, _ what: String) {
        let ranges = topology.ranges
        var covered = 0
        var previousEnd = -1
        for range in ranges {
            guard range.slots.lowerBound > previousEnd, topology.primaries.contains(range.primary) else {
                oracleFailure(target, "\(what): ranges out of order or owned by an unknown primary")
            }
            checkAddress(range.primary, what)
            previousEnd = range.slots.upperBound
            covered += range.slots.count
        }
        guard covered == topology.coveredSlotCount else {
            oracleFailure(target, "\(what): the ranges cover \(covered) slots, the topology says \(topology.coveredSlotCount)")
        }
        for primary in topology.primaries where !ranges.contains(where: { $0.primary == primary }) {
            oracleFailure(target, "\(what): the primary \(primary) owns no slot")
        }
        for slot in stride(from: 0, to: 16384, by: 97) {
            let owner = topology.primary(forSlot: slot)
            let inRange = ranges.first { $0.slots.contains(slot) }?.primary
            guard owner == inRange else { oracleFailure(target, "\(what): slot \(slot) has two readings") }
        }
        guard (try? ClusterTopology(slotsReply: topology.slotsReply, askedHost: "x")) == topology,
            (try? ClusterTopology(shardsReply: topology.shardsReply, askedHost: "x")) == topology
        else {
            oracleFailure(target, "\(what): the topology does not read back from its CLUSTER SLOTS and CLUSTER SHARDS forms")
        }
    }

    static func forEachString(in reply: RESPReply, depth: Int = 0, _ body: ([UInt8]) -> Void) {
        switch reply {
        case .bulkString(let bytes), .simpleString(let bytes), .error(let bytes): body(bytes)
        case .array(let elements) where depth < 8: for element in elements { forEachString(in: element, depth: depth + 1, body) }
        default: break
        }
    }

    /// CRC16/XMODEM bit by bit, over the hash tag when there is a non-empty one.
    static func referenceSlot(_ key: [UInt8]) -> Int {
        var hashed = key
        if let open = key.firstIndex(of: 0x7B), let close = key[(open + 1)...].firstIndex(of: 0x7D), close > open + 1 {
            hashed = Array(key[(open + 1)..<close])
        }
        var crc: UInt32 = 0
        for byte in hashed {
            crc ^= UInt32(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? ((crc << 1) ^ 0x1021) & 0xFFFF : (crc << 1) & 0xFFFF
            }
        }
        return Int(crc % 16384)
    }
}
