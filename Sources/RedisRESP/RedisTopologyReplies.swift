/// Readings of the replies that tell a client where to write: a sentinel's
/// `SENTINEL get-master-addr-by-name`, `ROLE`, a cluster's `CLUSTER SHARDS`
/// and `CLUSTER SLOTS`, and the `MOVED` / `ASK` redirections.
///
/// Every one of these replies redirects writes, so each reading is strict:
/// a reply of another shape, a port outside 1…65535, a host a host name
/// cannot be, a slot outside 0…16383 or owned twice is an error, never a
/// guess. Plain Swift over ``RESPReply`` with no I/O: FuzzTopology feeds
/// them hostile replies with an oracle (Sources/TokenTestSupport/TopologyOracle.swift).

/// A data node's address as a sentinel or a cluster names it.
public struct RedisNodeAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let host: String
    public let port: Int

    /// nil when `host` is not a plausible host name or address, or `port` is outside 1…65535.
    public init?(host: String, port: Int) {
        guard Self.isPlausibleHost(host), (1...65535).contains(port) else { return nil }
        self.host = host
        self.port = port
    }

    /// `host:port`, an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.host, lhs.port) < (rhs.host, rhs.port) }

    /// 1–253 bytes of letters, digits, `.`, `-`, `_` and `:` (IPv6), with `%` for a zone: what a
    /// host name or an IP literal can hold, and no byte that could change a message or a URL.
    public static func isPlausibleHost(_ host: String) -> Bool {
        let bytes = host.utf8
        guard (1...253).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "%"):
                return true
            default:
                return false
            }
        }
    }
}

/// Why a reply does not say what its command says; the message never echoes
/// more than a few of the reply's bytes.
public struct RedisReplyShapeError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What `ROLE` answers first.
public enum RedisRole: String, Sendable, Hashable {
    case primary = "master"
    case replica = "slave"
    case sentinel

    /// The first element of a `ROLE` reply.
    public init(roleReply reply: RESPReply) throws(RedisReplyShapeError) {
        guard case .array(let elements) = reply, let first = elements.first,
            let word = first.stringValue, let role = RedisRole(rawValue: word)
        else {
            throw RedisReplyShapeError("ROLE answered \(reply.shapeSummary), not an array starting with master, slave or sentinel")
        }
        self = role
    }
}

public enum SentinelReply {
    /// `SENTINEL get-master-addr-by-name <name>`: `[host, port]`, or nil when the
    /// sentinel knows no primary of that name (a null reply).
    public static func primaryAddress(_ reply: RESPReply) throws(RedisReplyShapeError) -> RedisNodeAddress? {
        switch reply {
        case .null:
            return nil
        case .array(let elements) where elements.count == 2:
            guard let host = elements[0].stringValue, let portText = elements[1].stringValue,
                let port = Int(decimal: portText)
            else {
                throw RedisReplyShapeError("get-master-addr-by-name answered an array that is not [host, port]")
            }
            guard let address = RedisNodeAddress(host: host, port: port) else {
                throw RedisReplyShapeError("get-master-addr-by-name named an address that is not a host and a port 1…65535")
            }
            return address
        default:
            throw RedisReplyShapeError("get-master-addr-by-name answered \(reply.shapeSummary), not [host, port]")
        }
    }

    /// The reply in the form a sentinel sends it (for the oracle and the tests).
    public static func encode(primaryAddress address: RedisNodeAddress?) -> RESPReply {
        guard let address else { return .null }
        return .array([.bulkString(Array(address.host.utf8)), .bulkString(Array(String(address.port).utf8))])
    }
}

/// A sentinel's `+switch-master` pub/sub message: the primary of `primaryName`
/// moved from `old` to `new`. It only tells a client to ask again (docs/DESIGN.md#high-availability):
/// discovery asks a sentinel and confirms with `ROLE`, and never writes to
/// `new` on this message's word alone.
public struct SentinelSwitchMaster: Sendable, Hashable {
    /// The pub/sub channel a sentinel announces it on.
    public static let channel = "+switch-master"

    /// The name as the sentinels monitor it (bytes: a name is not promised to be UTF-8).
    public let primaryName: [UInt8]
    public let old: RedisNodeAddress
    public let new: RedisNodeAddress

    public init(primaryName: [UInt8], old: RedisNodeAddress, new: RedisNodeAddress) {
        self.primaryName = primaryName
        self.old = old
        self.new = new
    }

    /// `["message", "+switch-master", "<name> <old-ip> <old-port> <new-ip> <new-port>"]`,
    /// three bulk strings, as a subscribed RESP2 connection receives it. Anything
    /// else (another channel, a payload of other than five words, an address that
    /// is not a host and a port 1…65535) is an error, never a guess.
    public init(messageReply reply: RESPReply) throws(RedisReplyShapeError) {
        guard case .array(let elements) = reply, elements.count == 3,
            case .bulkString(let kind) = elements[0], kind.elementsEqual("message".utf8),
            case .bulkString(let channel) = elements[1], case .bulkString(let payload) = elements[2]
        else {
            throw RedisReplyShapeError("a pub/sub message that is not [message, channel, payload]: \(reply.shapeSummary)")
        }
        guard channel.elementsEqual(Self.channel.utf8) else {
            throw RedisReplyShapeError("a message on a channel other than \(Self.channel)")
        }
        let words = payload.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard words.count == 5, !words[0].isEmpty else {
            throw RedisReplyShapeError("a \(Self.channel) payload of \(words.count) words, not <name> <old-ip> <old-port> <new-ip> <new-port>")
        }
        func address(_ host: ArraySlice<UInt8>, _ port: ArraySlice<UInt8>) throws(RedisReplyShapeError) -> RedisNodeAddress {
            guard let host = String(validating: host, as: UTF8.self),
                let port = Int(decimal: String(decoding: port, as: UTF8.self)),
                let address = RedisNodeAddress(host: host, port: port)
            else {
                throw RedisReplyShapeError("a \(Self.channel) payload names an address that is not a host and a port 1…65535")
            }
            return address
        }
        let old = try address(words[1], words[2])
        let new = try address(words[3], words[4])
        self.init(primaryName: Array(words[0]), old: old, new: new)
    }

    /// The message as a sentinel sends it (for the oracle and the tests).
    public var messageReply: RESPReply {
        let payload = primaryName + Array(" \(old.host) \(old.port) \(new.host) \(new.port)".utf8)
        return .array([.bulk("message"), .bulk(Self.channel), .bulkString(payload)])
    }
}

/// `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>`: the slot lives (or,
/// for ASK, this one request goes) elsewhere. An empty host means "the node you asked".
public struct ClusterRedirect: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case moved = "MOVED"
        case ask = "ASK"
    }
    public let kind: Kind
    public let slot: Int
    /// nil host: the same host as the node that answered.
    public let host: String?
    public let port: Int

    public init(kind: Kind, slot: Int, host: String?, port: Int) {
        self.kind = kind
        self.slot = slot
        self.host = host
        self.port = port
    }

    /// nil when the error reply is no redirect; throws when it is one but malformed.
    public init?(errorReply message: [UInt8]) throws(RedisReplyShapeError) {
        let kind: Kind
        if message.starts(with: "MOVED ".utf8) { kind = .moved } else if message.starts(with: "ASK ".utf8) { kind = .ask } else { return nil }
        let words = message.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard words.count == 3, let slot = Int(decimal: String(decoding: words[1], as: UTF8.self)),
            (0..<ClusterTopology.slotCount).contains(slot),
            let colon = words[2].lastIndex(of: UInt8(ascii: ":"))
        else {
            throw RedisReplyShapeError("a malformed \(kind.rawValue) redirection")
        }
        var hostBytes = words[2][..<colon]
        if hostBytes.first == UInt8(ascii: "["), hostBytes.last == UInt8(ascii: "]") {
            hostBytes = hostBytes.dropFirst().dropLast()
        }
        let host = String(decoding: hostBytes, as: UTF8.self)
        guard let port = Int(decimal: String(decoding: words[2][(colon + 1)...], as: UTF8.self)),
            RedisNodeAddress(host: host.isEmpty ? "x" : host, port: port) != nil,
            host.utf8.elementsEqual(hostBytes)
        else {
            throw RedisReplyShapeError("a \(kind.rawValue) redirection to an address that is not a host and a port 1…65535")
        }
        self.init(kind: kind, slot: slot, host: host.isEmpty ? nil : host, port: port)
    }

    /// The error reply's text, as a cluster node writes it.
    public var errorText: String {
        let shownHost = host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""
        return "\(kind.rawValue) \(slot) \(shownHost):\(port)"
    }

    /// The address, given the host of the node that answered.
    public func address(answeredBy node: RedisNodeAddress) -> RedisNodeAddress? {
        RedisNodeAddress(host: host ?? node.host, port: port)
    }
}

/// Which primary owns each of the 16,384 hash slots, read from `CLUSTER SHARDS`
/// (Redis 7.0+) or `CLUSTER SLOTS`. Slots no primary serves (a failed shard, a
/// range named with the unknown endpoint `?`) have no owner: their keys are
/// `.unavailable` until a refresh finds one.
public struct ClusterTopology: Sendable, Hashable {
    public static let slotCount = 16384

    /// The primaries that own at least one slot, in ascending address order.
    public let primaries: [RedisNodeAddress]
    /// Per slot, an index into ``primaries`` or -1.
    private let owners: [Int16]

    public init(ranges: [(slots: ClosedRange<Int>, primary: RedisNodeAddress)]) throws(RedisReplyShapeError) {
        var owners = [Int16](repeating: -1, count: Self.slotCount)
        let primaries = Array(Set(ranges.map(\.primary))).sorted()
        guard primaries.count <= Self.slotCount else { throw RedisReplyShapeError("more primaries than slots") }
        var index: [RedisNodeAddress: Int16] = [:]
        for (position, primary) in primaries.enumerated() { index[primary] = Int16(position) }
        for range in ranges {
            guard range.slots.lowerBound >= 0, range.slots.upperBound < Self.slotCount else {
                throw RedisReplyShapeError("a slot range outside 0…16383")
            }
            for slot in range.slots {
                guard owners[slot] < 0 else { throw RedisReplyShapeError("slot \(slot) is given to two ranges") }
                owners[slot] = index[range.primary]!
            }
        }
        self.primaries = primaries
        self.owners = owners
    }

    /// The primary that owns `slot` (0…16383), if any.
    public func primary(forSlot slot: Int) -> RedisNodeAddress? {
        let owner = owners[slot]
        return owner < 0 ? nil : primaries[Int(owner)]
    }

    /// Contiguous ranges with one owner, in slot order.
    public var ranges: [(slots: ClosedRange<Int>, primary: RedisNodeAddress)] {
        var result: [(slots: ClosedRange<Int>, primary: RedisNodeAddress)] = []
        var start = 0
        while start < Self.slotCount {
            let owner = owners[start]
            var end = start
            while end + 1 < Self.slotCount, owners[end + 1] == owner { end += 1 }
            if owner >= 0 { result.append((start...end, primaries[Int(owner)])) }
            start = end + 1
        }
        return result
    }

    /// Slots with an owner.
    public var coveredSlotCount: Int { owners.lazy.filter { $0 >= 0 }.count }

    /// `CLUSTER SLOTS`: `[[start, end, [host, port, id, …], replica…], …]`. An
    /// empty host is `askedHost` (the node that answered); `?` is unknown and
    /// its range is left without an owner.
    public init(slotsReply reply: RESPReply, askedHost: String) throws(RedisReplyShapeError) {
        guard case .array(let entries) = reply else {
            throw RedisReplyShapeError("CLUSTER SLOTS answered \(reply.shapeSummary), not an array")
        }
        var ranges: [(slots: ClosedRange<Int>, primary: RedisNodeAddress)] = []
        for entry in entries {
            guard case .array(let fields) = entry, fields.count >= 3,
                case .integer(let start) = fields[0], case .integer(let end) = fields[1],
                case .array(let node) = fields[2], node.count >= 2,
                let host = node[0].stringValue, case .integer(let port) = node[1]
            else {
                throw RedisReplyShapeError("a CLUSTER SLOTS entry is not [start, end, [host, port, …], …]")
            }
            guard start >= 0, start <= end, end < Int64(Self.slotCount) else {
                throw RedisReplyShapeError("a CLUSTER SLOTS range outside 0…16383")
            }
            if host == "?" { continue }
            guard let address = RedisNodeAddress(host: host.isEmpty ? askedHost : host, port: Int(clamping: port)) else {
                throw RedisReplyShapeError("CLUSTER SLOTS named an address that is not a host and a port 1…65535")
            }
            ranges.append((Int(start)...Int(end), address))
        }
        try self.init(ranges: ranges)
    }

    /// `CLUSTER SHARDS` in RESP2: each shard a flat map `slots` `[start, end, …]`,
    /// `nodes` `[[id, …, port, …, ip, …, endpoint, …, role, master, health, online…], …]`.
    /// A shard's slots go to its primary while that primary's health is `online`.
    /// `tls` reads `tls-port` instead of `port` (the TLS forms).
    public init(shardsReply reply: RESPReply, askedHost: String, tls: Bool = false) throws(RedisReplyShapeError) {
        guard case .array(let shards) = reply else {
            throw RedisReplyShapeError("CLUSTER SHARDS answered \(reply.shapeSummary), not an array")
        }
        var ranges: [(slots: ClosedRange<Int>, primary: RedisNodeAddress)] = []
        for shard in shards {
            let fields = try Self.map(shard, what: "a CLUSTER SHARDS shard")
            guard case .array(let bounds)? = fields["slots"], bounds.count.isMultiple(of: 2),
                case .array(let nodes)? = fields["nodes"]
            else {
                throw RedisReplyShapeError("a CLUSTER SHARDS shard lacks its slots or nodes")
            }
            var primary: RedisNodeAddress?
            for node in nodes {
                let node = try Self.map(node, what: "a CLUSTER SHARDS node")
                // Health is `online`, `loading` or `failed` (`fail` in Redis 7.0): only an online primary serves.
                guard node["role"]?.stringValue == "master", node["health"].map({ $0.stringValue == "online" }) ?? true else { continue }
                guard primary == nil else { throw RedisReplyShapeError("a CLUSTER SHARDS shard with two healthy primaries") }
                let endpoint = node["endpoint"]?.stringValue ?? node["ip"]?.stringValue
                guard let endpoint, case .integer(let port)? = node[tls ? "tls-port" : "port"] else {
                    // Redis 7.0 names a node's TLS port only under `tls-cluster yes`;
                    // without it, `port` is the plain one, useless to a TLS client.
                    if tls, node["port"] != nil {
                        throw RedisReplyShapeError(
                            "a CLUSTER SHARDS primary has a port but no tls-port: for rediss-cluster:// the nodes need tls-cluster yes"
                        )
                    }
                    throw RedisReplyShapeError("a CLUSTER SHARDS primary lacks its endpoint or \(tls ? "tls-port" : "port")")
                }
                if endpoint == "?" { continue }
                guard let address = RedisNodeAddress(host: endpoint.isEmpty ? askedHost : endpoint, port: Int(clamping: port)) else {
                    throw RedisReplyShapeError("CLUSTER SHARDS named an address that is not a host and a port 1…65535")
                }
                primary = address
            }
            var index = 0
            while index < bounds.count {
                guard case .integer(let start) = bounds[index], case .integer(let end) = bounds[index + 1],
                    start >= 0, start <= end, end < Int64(Self.slotCount)
                else {
                    throw RedisReplyShapeError("a CLUSTER SHARDS slot range outside 0…16383")
                }
                if let primary { ranges.append((Int(start)...Int(end), primary)) }
                index += 2
            }
        }
        try self.init(ranges: ranges)
    }

    /// This topology as `CLUSTER SLOTS` answers it (no replicas, no ids).
    public var slotsReply: RESPReply {
        .array(
            ranges.map { range in
                .array([
                    .integer(Int64(range.slots.lowerBound)), .integer(Int64(range.slots.upperBound)),
                    .array([.bulkString(Array(range.primary.host.utf8)), .integer(Int64(range.primary.port))]),
                ])
            }
        )
    }

    /// This topology as `CLUSTER SHARDS` answers it, one shard per primary.
    public var shardsReply: RESPReply {
        let all = ranges
        return .array(
            primaries.map { primary in
                let bounds = all.filter { $0.primary == primary }.flatMap {
                    [RESPReply.integer(Int64($0.slots.lowerBound)), .integer(Int64($0.slots.upperBound))]
                }
                let node: [RESPReply] = [
                    .bulk("port"), .integer(Int64(primary.port)), .bulk("endpoint"), .bulk(primary.host),
                    .bulk("role"), .bulk("master"), .bulk("health"), .bulk("online"),
                ]
                return .array([.bulk("slots"), .array(bounds), .bulk("nodes"), .array([.array(node)])])
            }
        )
    }

    /// A RESP2 flat map (`[key, value, key, value…]`) with bulk or simple string keys; a repeated key is an error.
    private static func map(_ reply: RESPReply, what: String) throws(RedisReplyShapeError) -> [String: RESPReply] {
        guard case .array(let elements) = reply, elements.count.isMultiple(of: 2) else {
            throw RedisReplyShapeError("\(what) is not a map")
        }
        var result: [String: RESPReply] = [:]
        var index = 0
        while index < elements.count {
            guard let key = elements[index].stringValue, result.updateValue(elements[index + 1], forKey: key) == nil else {
                throw RedisReplyShapeError("\(what) has a key that is not a string, or twice")
            }
            index += 2
        }
        return result
    }
}

/// Redis Cluster's key → slot: CRC16 (XMODEM) of the key, or of its hash tag
/// (the bytes between the first `{` and the next `}`, when not empty), mod 16384.
public enum RedisHashSlot {
    public static func slot(of key: [UInt8]) -> Int {
        slot(of: key[...])
    }

    /// Concrete, not over `some Collection<UInt8>`: called from another
    /// module, a generic version runs unspecialised, a witness-table call per
    /// byte of every replay key (docs/PERFORMANCE.md, "The Cluster route").
    public static func slot(of key: ArraySlice<UInt8>) -> Int {
        var hashed = key
        if let open = key.firstIndex(of: UInt8(ascii: "{")) {
            let afterOpen = open + 1
            if let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen {
                hashed = key[afterOpen..<close]
            }
        }
        var crc: UInt16 = 0
        for byte in hashed {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return Int(crc) & (ClusterTopology.slotCount - 1)
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}

extension RESPReply {
    /// A bulk or simple string as UTF-8 text (nil for invalid UTF-8 or another kind).
    public var stringValue: String? {
        switch self {
        case .bulkString(let bytes), .simpleString(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }

    static func bulk(_ text: String) -> RESPReply { .bulkString(Array(text.utf8)) }

    /// The reply's kind and size, never its bytes.
    public var shapeSummary: String {
        switch self {
        case .simpleString: "a simple string"
        case .error: "an error"
        case .integer: "an integer"
        case .bulkString(let bytes): "a bulk string of \(bytes.count) bytes"
        case .null: "null"
        case .array(let elements): "an array of \(elements.count) elements"
        }
    }
}

extension Int {
    /// `[0-9]{1,9}` only: no sign, no spaces, no overflow.
    package init?(decimal text: String) {
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int(text)
        else { return nil }
        self = value
    }
}
