import Foundation
import IntegrationSupport

#if canImport(Glibc)
import Glibc
#endif

/// Three primaries with two replicas each, every `redis-server` in a network
/// namespace of its own (``NetworkNamespaces``), announcing its own address
/// (`cluster-announce-ip`), with the settings of ``ClusterFailoverTopology``
/// and ``FailoverSettings``. The failure is a partition, not a kill: the
/// primary of slot 0 is cut off from its replicas and from every other node
/// while the gates, in the hub, still reach it. It keeps running, and
/// believes itself primary, until the partition heals.
///
/// Two replicas, as in ``ClusterFailoverTopology``: with one, the promoted
/// replica would have none left (the cut-off node is unreachable), and
/// `min-replicas-to-write 1` or `replicated` durability would refuse every
/// write of the shard until the partition heals.
final class PartitionedClusterTopology: FailoverTopology, @unchecked Sendable {
    static let nodeTimeoutMilliseconds = 1000
    static let port = 6379

    struct Server {
        let namespace: String
        let address: String
        let directory: URL
        let process: Process
    }

    let network: NetworkNamespaces
    private(set) var servers: [Server] = []
    private let lock = NSLock()
    private var victim: (server: Int, replicaAddresses: [String], slots: [ClosedRange<Int>]) = (0, [], [])

    init() throws {
        guard let redisServer = Integration.redisServerPath, Integration.redisCLIPath != nil else {
            throw RedisServerError(description: "redis-server or redis-cli not installed, and TOKENINSPECT_INTEGRATION=require")
        }
        network = try NetworkNamespaces()
        do {
            // The recommended settings, as start-up options rather than CONFIG SET.
            let settings = FailoverSettings.minReplicas.flatMap { ["--" + $0[2], $0[3]] }
            for _ in 0..<9 {
                let (namespace, address) = try network.addHost()
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-cut-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let arguments =
                    [
                        "--bind", address, "--port", String(Self.port), "--protected-mode", "no",
                        "--save", "", "--appendonly", "no", "--daemonize", "no",
                        "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
                        "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", String(Self.nodeTimeoutMilliseconds),
                        "--cluster-require-full-coverage", "no", "--cluster-announce-ip", address,
                        "--cluster-allow-replica-migration", "no",
                    ] + settings
                let process = try network.launch(namespace, redisServer, arguments)
                servers.append(Server(namespace: namespace, address: address, directory: directory, process: process))
            }
            for server in servers {
                try Integration.waitUntil("redis-server on \(server.address) answers", seconds: 10) {
                    guard server.process.isRunning else {
                        throw RedisServerError(description: "redis-server on \(server.address) exited: \(log(server).suffix(600))")
                    }
                    return try cli(server.address, ["PING"]).contains("PONG")
                }
            }
            try cliOnHub(["--cluster", "create"] + servers.map { "\($0.address):\(Self.port)" } + ["--cluster-replicas", "2", "--cluster-yes"])
        } catch {
            remove()
            throw error
        }
    }

    /// Two seeds, as an operator names them.
    var url: String { "redis-cluster://" + servers.prefix(2).map { "\($0.address):\(Self.port)" }.joined(separator: ",") }

    func log(_ server: Server) -> String {
        (try? String(contentsOf: server.directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
    }

    /// `redis-cli` against `address`, run in the hub.
    @discardableResult
    func cli(_ address: String, _ arguments: [String]) throws -> String {
        try cliOnHub(["-h", address, "-p", String(Self.port)] + arguments)
    }

    @discardableResult
    private func cliOnHub(_ arguments: [String]) throws -> String {
        try network.run(network.hub, Integration.redisCLIPath ?? "redis-cli", arguments)
    }

    func nodes(accordingTo address: String) throws -> [ClusterFailoverTopology.Node] {
        try cli(address, ["CLUSTER", "NODES"]).split(whereSeparator: \.isNewline).compactMap(ClusterFailoverTopology.Node.init)
    }

    func replication(_ address: String) throws -> [String: String] {
        var fields: [String: String] = [:]
        for line in try cli(address, ["INFO", "replication"]).split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }

    func waitUntilPrimed() throws {
        do {
            try Integration.waitUntil("every node sees three primaries with two replicas each in sync, and no node failing", seconds: 60) {
                try ClusterFailoverTopology.everyShardHasTwoReplicas(try servers.map { try nodes(accordingTo: $0.address) }) { replica, primary in
                    let fields = try replication(replica.host)
                    return fields["role"] == "slave" && fields["master_host"] == primary.host && fields["master_link_status"] == "up"
                }
            }
        } catch {
            throw RedisServerError(description: "\(error); the cluster now: \(describe())")
        }
    }

    /// Cuts the primary of slot 0 off from every other node.
    func failPrimary() throws {
        let view = try nodes(accordingTo: servers[0].address)
        guard let primary = view.first(where: { $0.flags.contains("master") && $0.slots.contains { $0.contains(0) } }),
            let index = servers.firstIndex(where: { $0.address == primary.host })
        else {
            throw RedisServerError(description: "no primary serves slot 0")
        }
        let replicaAddresses = view.filter { $0.primaryID == primary.id }.map(\.host)
        lock.withLock { victim = (index, replicaAddresses, primary.slots) }
        try network.cut(servers[index].namespace, from: servers.map(\.address).filter { $0 != primary.host })
    }

    /// One of the cut-off primary's replicas answers `master` to `ROLE`.
    func failoverDetected() throws -> Bool {
        let replicas = lock.withLock { victim.replicaAddresses }
        return replicas.contains { ((try? cli($0, ["ROLE"])) ?? "").hasPrefix("master") }
    }

    func wasOnVictim(slot: Int) -> Bool {
        lock.withLock { victim.slots.contains { $0.contains(slot) } }
    }

    /// Who the cut-off node says it is, and the cluster as a healthy node sees it.
    func describe() -> String {
        let index = lock.withLock { victim.server }
        let healthy = servers.indices.first { $0 != index } ?? 0
        let seen = (try? cli(servers[healthy].address, ["CLUSTER", "NODES"])) ?? "CLUSTER NODES did not answer"
        let cutOff =
            (try? cli(servers[index].address, ["CLUSTER", "INFO"]))?.split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix("cluster_state") } ?? "?"
        return "the cut-off node \(servers[index].address): \(cutOff); the cluster as \(servers[healthy].address) sees it:\n\(seen)"
    }

    /// Heals the partition; the old primary learns the newer epoch of its
    /// slots, turns replica of the promoted node and drops what only it had.
    func returnVictimAsReplica() throws {
        let index = lock.withLock { victim.server }
        try network.heal(servers[index].namespace)
        try Integration.waitUntil("the cut-off primary replicates the promoted replica", seconds: 40) {
            let fields = try replication(servers[index].address)
            return fields["role"] == "slave" && fields["master_link_status"] == "up"
        }
    }

    /// SIGKILL to every server by its pid, then the namespaces and directories go.
    func remove() {
        for server in servers where server.process.isRunning {
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
        }
        for server in servers { try? FileManager.default.removeItem(at: server.directory) }
        servers = []
        network.remove()
    }
}
