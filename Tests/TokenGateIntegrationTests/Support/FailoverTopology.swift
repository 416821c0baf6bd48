import Foundation
import IntegrationSupport

/// A Redis high-availability setup the failover tests kill a primary of:
/// real `redis-server` (and `redis-sentinel`) processes on loopback with the
/// settings docs/DESIGN.md#redis-settings recommends (`min-replicas-to-write 1`,
/// `min-replicas-max-lag 2`, short `down-after-milliseconds` and
/// `cluster-node-timeout`). Reused across repetitions: the killed primary
/// comes back as a replica, and the next repetition kills the new primary.
protocol FailoverTopology: AnyObject, Sendable {
    /// The `--replay` URL the gates are given.
    var url: String { get }
    /// Waits until a failover can be survived: every replica in sync, and
    /// everyone who must elect or follow a new primary knows every replica.
    func waitUntilPrimed() throws
    /// Takes the current primary (of one shard, in Cluster) away: SIGKILL to
    /// its pid, or a network partition that leaves it running.
    func failPrimary() throws
    /// Whether a new primary has been named: a sentinel answers another
    /// address to `get-master-addr-by-name`, or the victim's replica says
    /// `master` to `ROLE`.
    func failoverDetected() throws -> Bool
    /// Whether the failed primary served the replay key's hash slot (every
    /// slot in Sentinel mode: there is one shard).
    func wasOnVictim(slot: Int) -> Bool
    /// Brings the failed server back (a killed one restarted on the same port
    /// with the same options and no data, a cut-off one reconnected) and
    /// waits until it replicates the new primary.
    func returnVictimAsReplica() throws
    /// Who is primary of whom now, for a failure's message.
    func describe() -> String
    func remove()
}

enum FailoverSettings {
    /// The recommendation of docs/DESIGN.md#redis-settings: a primary cut off from its replicas stops accepting writes.
    /// With it, docs/REDIS.md's `repl-diskless-sync-delay 0`: a replica that needs a full resync
    /// from a newly promoted primary otherwise waits Redis's default 5 s for it, and the new
    /// primary refuses every write (`NOREPLICAS`) until the replica is back.
    static let minReplicas = [
        ["CONFIG", "SET", "min-replicas-to-write", "1"], ["CONFIG", "SET", "min-replicas-max-lag", "2"],
        ["CONFIG", "SET", "repl-diskless-sync-delay", "0"],
    ]

    static func apply(to ports: [Int]) throws {
        for port in ports {
            for command in minReplicas { try Integration.redisCLI(["-p", String(port)] + command) }
        }
    }

    /// `INFO replication` of `port` as a dictionary.
    static func replication(port: Int) throws -> [String: String] {
        let text = try Integration.redisCLI(["-p", String(port), "INFO", "replication"])
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }

    /// Whether `port` replicates `primaryPort` with the link up.
    static func replicates(port: Int, primaryPort: Int) throws -> Bool {
        let fields = try replication(port: port)
        return fields["role"] == "slave" && fields["master_port"] == String(primaryPort) && fields["master_link_status"] == "up"
    }
}

/// One primary, two replicas, three sentinels (`down-after-milliseconds 2000`).
///
/// Not 1000: with the gates' load on the same two cores, a sentinel that had
/// just switched to the promoted replica saw no answer to its PING within
/// 1000 ms and failed the new primary over again, 1.0 s after the switch
/// (sentinel log, 2026-11-26): the second promotion took a replica still in
/// its full resync, and left the first promoted node a primary with no
/// replica — the 5.2 s windows that this test missed about once in twenty.
final class SentinelFailoverTopology: FailoverTopology, @unchecked Sendable {
    let group: RedisSentinelGroup
    private let lock = NSLock()
    private var victimPort = 0

    init() throws {
        group = try RedisSentinelGroup(downAfterMilliseconds: 2000)
        do {
            try FailoverSettings.apply(to: servers.map(\.port))
        } catch {
            group.remove()
            throw error
        }
    }

    var servers: [RedisServer] { [group.primary] + group.replicas }
    var url: String { group.url }

    /// The primary as the first sentinel names it.
    func currentPrimaryPort() throws -> Int {
        guard let port = try group.primaryPort(accordingTo: group.sentinels[0]) else {
            throw RedisServerError(description: "the sentinel names no primary")
        }
        return port
    }

    func waitUntilPrimed() throws {
        do {
            try waitUntilBothReplicasAreKnown()
        } catch {
            throw RedisServerError(description: "\(error); Redis now: \(describe())")
        }
    }

    private func waitUntilBothReplicasAreKnown() throws {
        try Integration.waitUntil(
            "every sentinel names one primary, both replicas replicate it, and every sentinel lists both as healthy replicas",
            seconds: 60
        ) {
            let primary = try currentPrimaryPort()
            let replicaPorts = servers.map(\.port).filter { $0 != primary }
            for port in replicaPorts where try !FailoverSettings.replicates(port: port, primaryPort: primary) { return false }
            for sentinel in group.sentinels {
                guard try group.primaryPort(accordingTo: sentinel) == primary else { return false }
                let healthy = try Self.healthyReplicaPorts(sentinel: sentinel, primaryName: group.primaryName)
                guard Set(replicaPorts).isSubset(of: healthy) else { return false }
            }
            return true
        }
    }

    /// The ports of the replicas a sentinel lists with the flags `slave` alone
    /// (not `s_down`, not `disconnected`) and its link to the primary up.
    static func healthyReplicaPorts(sentinel: RedisSentinelProcess, primaryName: String) throws -> Set<Int> {
        // redis-cli prints the nested reply one value a line: key, value, key, value…, each replica from "name".
        let lines = try Integration.redisCLI(["-p", String(sentinel.port), "SENTINEL", "replicas", primaryName])
            .split(separator: "\n").map(String.init)
        var healthy = Set<Int>()
        var current: [String: String] = [:]
        func close() {
            if current["flags"] == "slave", current["master-link-status"] == "ok", let port = current["port"].flatMap(Int.init) {
                healthy.insert(port)
            }
            current = [:]
        }
        var index = 0
        while index + 1 < lines.count {
            if lines[index] == "name", !current.isEmpty { close() }
            current[lines[index]] = lines[index + 1]
            index += 2
        }
        close()
        return healthy
    }

    func failPrimary() throws {
        let port = try currentPrimaryPort()
        guard let server = servers.first(where: { $0.port == port }) else {
            throw RedisServerError(description: "the sentinels name \(port), not one of ours")
        }
        lock.withLock { victimPort = port }
        server.stop()  // SIGKILL to its pid
    }

    func failoverDetected() throws -> Bool {
        let victim = lock.withLock { victimPort }
        for sentinel in group.sentinels {
            if let port = try? group.primaryPort(accordingTo: sentinel), port != victim { return true }
        }
        return false
    }

    func wasOnVictim(slot: Int) -> Bool { true }

    func describe() -> String {
        let named = group.sentinels.map { (try? group.primaryPort(accordingTo: $0)).flatMap { $0 }.map(String.init) ?? "?" }
        let servers = servers.map { server -> String in
            let fields = (try? FailoverSettings.replication(port: server.port)) ?? [:]
            return
                "\(server.port) \(fields["role"] ?? "down") replicas \(fields["connected_slaves"] ?? "-") of \(fields["master_port"] ?? "-") link \(fields["master_link_status"] ?? "-")"
        }
        // The sentinels' own account of the failover (elections, promotions, reconfigurations), for a run that missed.
        let words = [
            "+try-failover", "+elected-leader", "+selected-slave", "+promoted-slave", "+switch-master",
            "+slave-reconf", "-failover-abort", "+failover-end", "+convert-to-slave",
        ]
        let events = group.sentinels.enumerated().flatMap { index, sentinel in
            sentinel.log.split(separator: "\n").filter { line in words.contains { line.contains($0) } }.map { "sentinel \(index): \($0)" }
        }
        return "sentinels name \(named); " + servers.joined(separator: "; ") + "\n  " + events.suffix(40).joined(separator: "\n  ")
    }

    func returnVictimAsReplica() throws {
        let victim = lock.withLock { victimPort }
        guard let server = servers.first(where: { $0.port == victim }) else { return }
        try server.restart()
        try FailoverSettings.apply(to: [victim])
        try Integration.waitUntil("the old primary replicates the new one", seconds: 40) {
            try FailoverSettings.replicates(port: victim, primaryPort: try currentPrimaryPort())
        }
    }

    func remove() { group.remove() }
}

/// Three primaries with **two** replicas each (`cluster-node-timeout 1000`,
/// `cluster-require-full-coverage no`). Two, not one: with
/// `min-replicas-to-write 1` (docs/DESIGN.md#redis-settings) or `replicated` durability, a shard
/// whose only replica was promoted has no replica left and answers 503 until
/// the dead node returns; the test measures the failover, not that wait.
final class ClusterFailoverTopology: FailoverTopology, @unchecked Sendable {
    let cluster: RedisClusterGroup
    private let lock = NSLock()
    private var victim: (port: Int, replicaPorts: [Int], slots: [ClosedRange<Int>]) = (0, [], [])

    init() throws {
        cluster = try RedisClusterGroup(primaries: 3, replicasEach: 2, nodeTimeoutMilliseconds: 1000)
        do {
            try FailoverSettings.apply(to: cluster.nodes.map(\.port))
            try Self.keepReplicasInPlace(cluster.nodes.map(\.port))
        } catch {
            cluster.remove()
            throw error
        }
    }

    var url: String { cluster.url }

    /// No replica migration: a shard left without a replica for a moment
    /// (its primary killed, the replica promoted) would otherwise take one from
    /// another shard, and the next repetition's victim could have one replica.
    static func keepReplicasInPlace(_ ports: [Int]) throws {
        for port in ports {
            try Integration.redisCLI(["-p", String(port), "CONFIG", "SET", "cluster-allow-replica-migration", "no"])
        }
    }

    /// One line of `CLUSTER NODES`.
    struct Node {
        let id: String
        let host: String
        let port: Int
        let flags: Set<String>
        let primaryID: String
        let slots: [ClosedRange<Int>]

        init?(_ line: Substring) {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, let at = fields[1].firstIndex(of: "@"), let colon = fields[1][..<at].lastIndex(of: ":"),
                let port = Int(fields[1][fields[1].index(after: colon)..<at])
            else { return nil }
            id = String(fields[0])
            host = String(fields[1][..<colon])
            self.port = port
            flags = Set(fields[2].split(separator: ",").map(String.init))
            primaryID = String(fields[3])
            slots = fields.dropFirst(8).compactMap { field -> ClosedRange<Int>? in
                if field.hasPrefix("[") { return nil }  // a slot being migrated
                let bounds = field.split(separator: "-").compactMap { Int($0) }
                return bounds.count == 2 ? bounds[0]...bounds[1] : bounds.count == 1 ? bounds[0]...bounds[0] : nil
            }
        }
    }

    func nodes(accordingTo port: Int) throws -> [Node] {
        try Integration.redisCLI(["-p", String(port), "CLUSTER", "NODES"]).split(whereSeparator: \.isNewline).compactMap(Node.init)
    }

    func waitUntilPrimed() throws {
        do {
            try waitUntilEveryShardHasTwoReplicas()
        } catch {
            throw RedisServerError(description: "\(error); the cluster now: \(describe())")
        }
    }

    private func waitUntilEveryShardHasTwoReplicas() throws {
        try Integration.waitUntil("every node sees three primaries with two replicas each in sync, and no node failing", seconds: 60) {
            try Self.everyShardHasTwoReplicas(try cluster.nodes.map { try nodes(accordingTo: $0.port) }) { replica, primary in
                try FailoverSettings.replicates(port: replica.port, primaryPort: primary.port)
            }
        }
    }

    /// Every node's view (one a node) shows every node, none failing, three
    /// primaries with two replicas each, and `inSync` holds for each replica.
    static func everyShardHasTwoReplicas(_ views: [[Node]], inSync: (_ replica: Node, _ primary: Node) throws -> Bool) throws -> Bool {
        for view in views {
            guard view.count == views.count,
                view.allSatisfy({ $0.flags.isDisjoint(with: ["fail", "fail?", "handshake", "noaddr"]) })
            else { return false }
            let primaries = view.filter { $0.flags.contains("master") }
            guard primaries.count == 3 else { return false }
            for primary in primaries {
                let replicas = view.filter { $0.primaryID == primary.id }
                guard replicas.count == 2 else { return false }
                for replica in replicas where try !inSync(replica, primary) { return false }
            }
        }
        return true
    }

    func failPrimary() throws {
        let view = try nodes(accordingTo: cluster.nodes[0].port)
        // The primary of slot 0's shard, so repetitions rotate through the nodes that shard's replicas are.
        guard let primary = view.first(where: { $0.flags.contains("master") && $0.slots.contains { $0.contains(0) } }),
            let server = cluster.node(port: primary.port)
        else {
            throw RedisServerError(description: "no primary serves slot 0")
        }
        let replicaPorts = view.filter { $0.primaryID == primary.id }.map(\.port)
        lock.withLock { victim = (primary.port, replicaPorts, primary.slots) }
        server.stop()  // SIGKILL to its pid
    }

    func failoverDetected() throws -> Bool {
        let replicaPorts = lock.withLock { victim.replicaPorts }
        return replicaPorts.contains { ((try? Integration.redisCLI(["-p", String($0), "ROLE"])) ?? "").hasPrefix("master") }
    }

    func wasOnVictim(slot: Int) -> Bool {
        lock.withLock { victim.slots.contains { $0.contains(slot) } }
    }

    func describe() -> String {
        (try? Integration.redisCLI(["-p", String(cluster.nodes[1].port), "CLUSTER", "NODES"])) ?? "CLUSTER NODES did not answer"
    }

    func returnVictimAsReplica() throws {
        let port = lock.withLock { victim.port }
        guard let server = cluster.node(port: port) else { return }
        try server.restart()
        try FailoverSettings.apply(to: [port])
        try Self.keepReplicasInPlace([port])
        try Integration.waitUntil("the old primary replicates the promoted replica", seconds: 40) {
            let fields = try FailoverSettings.replication(port: port)
            return fields["role"] == "slave" && fields["master_link_status"] == "up"
        }
    }

    func remove() { cluster.remove() }
}
