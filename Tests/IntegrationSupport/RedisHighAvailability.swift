import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    public static let redisSentinelPath: String? = executable("redis-sentinel")
    public static let redisCLIPath: String? = executable("redis-cli")

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin"]
        return directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `redis-server`, `redis-sentinel` and `redis-cli` are all there (or required).
    public static var redisHighAvailability: Bool {
        (redisServerPath != nil && redisSentinelPath != nil && redisCLIPath != nil) || required
    }

    /// Runs `redis-cli` with `arguments` and returns its standard output
    /// (`--no-raw` off: one value a line). Throws when it exits non-zero or
    /// takes over 20 s.
    @discardableResult
    public static func redisCLI(_ arguments: [String]) throws -> String {
        guard let binary = redisCLIPath else { throw RedisServerError(description: "redis-cli not installed") }
        let finished = try Subprocess.run(binary, arguments)
        guard finished.status == 0 else {
            throw RedisServerError(
                description: "redis-cli \(arguments.joined(separator: " ")) exited \(finished.status): \(finished.text.suffix(400))"
            )
        }
        return finished.text
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass.
    public static func waitUntil(_ what: String, seconds: Double, _ condition: () throws -> Bool) throws {
        let start = Date()
        var lastError: (any Error)?
        while Date().timeIntervalSince(start) < seconds {
            do {
                if try condition() { return }
            } catch {
                lastError = error
            }
            usleep(50_000)
        }
        throw RedisServerError(description: "timed out after \(seconds) s waiting until \(what)" + (lastError.map { ": \($0)" } ?? ""))
    }
}

/// A throw-away `redis-sentinel` on a free loopback port monitoring one
/// primary as `primaryName`, with a short `down-after-milliseconds` and
/// `failover-timeout` so a test's failover takes seconds. Its config file
/// (which a sentinel rewrites) lives in its own temporary directory. With
/// `tls` it listens on a TLS port only (`port 0`) and speaks TLS to the data
/// nodes and the other sentinels (`tls-replication yes`).
public final class RedisSentinelProcess: @unchecked Sendable {
    public private(set) var port: Int = 0
    public let directory: URL
    private var process: Process?

    public init(
        primaryName: String = "mymaster",
        primaryPort: Int,
        quorum: Int = 2,
        downAfterMilliseconds: Int = 1000,
        failoverTimeoutMilliseconds: Int = 3000,
        dataPassword: String? = nil,
        sentinelPassword: String? = nil,
        tls: RedisTLSFiles? = nil
    ) throws {
        guard let binary = Integration.redisSentinelPath else {
            throw RedisServerError(description: "redis-sentinel not installed, and TOKENINSPECT_INTEGRATION=require")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-sentinel-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try RedisServer.freePort()
            var lines =
                (tls.map { ["port 0", "tls-port \(port)"] + $0.sentinelConfigLines } ?? ["port \(port)"]) + [
                    "bind 127.0.0.1", "daemonize no", "protected-mode no",
                    "dir \(directory.path)", "logfile \(directory.appendingPathComponent("sentinel.log").path)",
                    "sentinel monitor \(primaryName) 127.0.0.1 \(primaryPort) \(quorum)",
                    "sentinel down-after-milliseconds \(primaryName) \(downAfterMilliseconds)",
                    "sentinel failover-timeout \(primaryName) \(failoverTimeoutMilliseconds)",
                    "sentinel parallel-syncs \(primaryName) 2",
                ]
            if let dataPassword { lines.append("sentinel auth-pass \(primaryName) \(dataPassword)") }
            if let sentinelPassword { lines.append("requirepass \(sentinelPassword)") }
            let config = directory.appendingPathComponent("sentinel.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [config.path]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
                self.process = process
                self.port = port
                let started = Date()
                while Date().timeIntervalSince(started) < 10 {
                    if !process.isRunning { throw RedisServerError(description: "redis-sentinel exited at start: \(log.suffix(600))") }
                    if RedisServer.accepts(port: port) { return }
                    usleep(10_000)
                }
                throw RedisServerError(description: "redis-sentinel did not listen on \(port) within 10 s")
            } catch {
                stop()
                lastError = error
            }
        }
        throw lastError ?? RedisServerError(description: "redis-sentinel did not start")
    }

    deinit { stop() }

    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("sentinel.log"), encoding: .utf8)) ?? ""
    }

    /// SIGKILL and wait (only this process, by its pid).
    public func stop() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        process = nil
    }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// One primary, `replicaCount` replicas and `sentinelCount` sentinels, ready
/// for a failover: ``init`` returns once every sentinel lists every replica
/// (learned from the primary's `INFO`) and the other sentinels (learned from
/// their hello messages) — a sentinel that never saw a replica cannot move it
/// to the new primary, and one that knows no peers cannot be elected.
public final class RedisSentinelGroup: @unchecked Sendable {
    public let primaryName: String
    public let primary: RedisServer
    public let replicas: [RedisServer]
    public let sentinels: [RedisSentinelProcess]
    /// Every node and sentinel on a TLS port only, when set.
    public let tls: RedisTLSFiles?

    public init(
        primaryName: String = "mymaster",
        replicaCount: Int = 2,
        sentinelCount: Int = 3,
        downAfterMilliseconds: Int = 1000,
        dataPassword: String? = nil,
        sentinelPassword: String? = nil,
        tls: RedisTLSFiles? = nil
    ) throws {
        self.primaryName = primaryName
        self.tls = tls
        // No 5 s wait before a diskless full sync (7.0's default), so replicas hold the data within a moment.
        let auth =
            (dataPassword.map { ["--requirepass", $0, "--masterauth", $0] } ?? []) + ["--repl-diskless-sync-delay", "0"]
            + (tls?.serverArguments ?? [])
        let portArgument = tls == nil ? "--port" : "--tls-port"
        let cli = tls?.cliArguments ?? []
        let dataAuth = dataPassword.map { ["--no-auth-warning", "-a", $0] } ?? []
        // Equal replica-priority (the default 100) everywhere: the most complete replica wins.
        primary = try RedisServer(auth, portArgument: portArgument)
        var replicas: [RedisServer] = []
        var sentinels: [RedisSentinelProcess] = []
        do {
            for _ in 0..<replicaCount {
                replicas.append(try RedisServer(auth + ["--replicaof", "127.0.0.1", String(primary.port)], portArgument: portArgument))
            }
            // Replicas in sync before the sentinels start: a sentinel's first
            // INFO of the primary then lists them, instead of one 10 s later.
            try Integration.waitUntil("every replica is in sync", seconds: 30) {
                try replicas.allSatisfy { replica in
                    try Integration.redisCLI(cli + ["-p", String(replica.port)] + dataAuth + ["INFO", "replication"])
                        .contains("master_link_status:up")
                }
            }
            for _ in 0..<sentinelCount {
                sentinels.append(
                    try RedisSentinelProcess(
                        primaryName: primaryName,
                        primaryPort: primary.port,
                        quorum: sentinelCount / 2 + 1,
                        downAfterMilliseconds: downAfterMilliseconds,
                        dataPassword: dataPassword,
                        sentinelPassword: sentinelPassword,
                        tls: tls
                    )
                )
            }
        } catch {
            for server in replicas { server.remove() }
            for sentinel in sentinels { sentinel.remove() }
            primary.remove()
            throw error
        }
        self.replicas = replicas
        self.sentinels = sentinels
        let replicaPorts = Set(replicas.map { String($0.port) })
        let sentinelAuth = sentinelPassword.map { ["--no-auth-warning", "-a", $0] } ?? []
        do {
            try Integration.waitUntil("every replica is in sync, and every sentinel knows every replica and every other sentinel", seconds: 30) {
                for replica in replicas {
                    let info = try Integration.redisCLI(cli + ["-p", String(replica.port)] + dataAuth + ["INFO", "replication"])
                    guard info.contains("master_link_status:up") else { return false }
                }
                for sentinel in sentinels {
                    let base = cli + ["-p", String(sentinel.port)] + sentinelAuth + ["SENTINEL"]
                    let known = try Integration.redisCLI(base + ["replicas", primaryName])
                    let ports = Set(known.split(separator: "\n").map(String.init))
                    guard replicaPorts.isSubset(of: ports) else { return false }
                    let peers = try Integration.redisCLI(base + ["sentinels", primaryName])
                    let peerPorts = Set(peers.split(separator: "\n").map(String.init))
                    guard sentinels.allSatisfy({ $0 === sentinel || peerPorts.contains(String($0.port)) }) else { return false }
                }
                return true
            }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// `redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,…#primaryName` (`rediss-sentinel://` with TLS).
    public var url: String {
        (tls == nil ? "redis-sentinel://" : "rediss-sentinel://") + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
            + "#\(primaryName)"
    }

    /// The port the given sentinel names as the primary's.
    public func primaryPort(accordingTo sentinel: RedisSentinelProcess, sentinelPassword: String? = nil) throws -> Int? {
        let auth = sentinelPassword.map { ["--no-auth-warning", "-a", $0] } ?? []
        let answer = try Integration.redisCLI(
            (tls?.cliArguments ?? []) + ["-p", String(sentinel.port)] + auth
                + ["SENTINEL", "get-master-addr-by-name", primaryName]
        )
        let lines = answer.split(separator: "\n")
        return lines.count == 2 ? Int(lines[1]) : nil
    }

    public func remove() {
        for sentinel in sentinels { sentinel.remove() }
        for replica in replicas { replica.remove() }
        primary.remove()
    }
}

/// A throw-away Redis Cluster of `primaries` primaries with `replicasEach`
/// replicas each on loopback, made with `redis-cli --cluster create`, with
/// `cluster-require-full-coverage no` and a short `cluster-node-timeout`.
/// Each node's bus port is picked free too (`cluster-port`), not port + 10000.
/// With `tls` every node listens on a TLS port only and the cluster bus is TLS
/// too (`tls-cluster yes`, without which the nodes announce no TLS port).
public final class RedisClusterGroup: @unchecked Sendable {
    public let nodes: [RedisServer]
    public let nodeTimeoutMilliseconds: Int
    public let tls: RedisTLSFiles?
    /// What `redis-cli` needs before `-p` to reach a node (TLS options, or nothing).
    public var cli: [String] { tls?.cliArguments ?? [] }

    public init(primaries: Int = 3, replicasEach: Int = 1, nodeTimeoutMilliseconds: Int = 1000, tls: RedisTLSFiles? = nil) throws {
        self.nodeTimeoutMilliseconds = nodeTimeoutMilliseconds
        self.tls = tls
        let cli = tls?.cliArguments ?? []
        let tlsArguments = tls.map { $0.serverArguments + ["--tls-cluster", "yes"] } ?? []
        var nodes: [RedisServer] = []
        do {
            for _ in 0..<(primaries * (1 + replicasEach)) {
                nodes.append(
                    try RedisServer(
                        tlsArguments + [
                            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                            "--cluster-port", String(try RedisServer.freePort()),
                            "--cluster-node-timeout", String(nodeTimeoutMilliseconds),
                            "--cluster-require-full-coverage", "no",
                            // A replica that never synced cannot be promoted; sync at once.
                            "--repl-diskless-sync-delay", "0",
                        ],
                        portArgument: tls == nil ? "--port" : "--tls-port"
                    )
                )
            }
            try Integration.redisCLI(
                cli + ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                    + ["--cluster-replicas", String(replicasEach), "--cluster-yes"]
            )
            try Integration.waitUntil("every node says cluster_state:ok and knows every node, and every replica is in sync", seconds: 30) {
                for node in nodes {
                    let info = try Integration.redisCLI(cli + ["-p", String(node.port), "CLUSTER", "INFO"])
                    guard info.contains("cluster_state:ok"), info.contains("cluster_known_nodes:\(nodes.count)") else { return false }
                    let replication = try Integration.redisCLI(cli + ["-p", String(node.port), "INFO", "replication"])
                    guard replication.contains("role:master") || replication.contains("master_link_status:up") else { return false }
                }
                return true
            }
        } catch {
            for node in nodes { node.remove() }
            throw error
        }
        self.nodes = nodes
    }

    deinit { remove() }

    /// `redis-cluster://127.0.0.1:p1,127.0.0.1:p2` (two seeds; `rediss-cluster://` with TLS).
    public var url: String {
        (tls == nil ? "redis-cluster://" : "rediss-cluster://") + nodes.prefix(2).map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
    }

    /// The node on `port`.
    public func node(port: Int) -> RedisServer? { nodes.first { $0.port == port } }

    /// `CLUSTER MYID` of the node on `port`.
    public func id(port: Int) throws -> String {
        try Integration.redisCLI(cli + ["-p", String(port), "CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `port` answers `ROLE` with `master`.
    public func isPrimary(port: Int) -> Bool {
        ((try? Integration.redisCLI(cli + ["-p", String(port), "ROLE"])) ?? "").hasPrefix("master")
    }

    public func remove() {
        for node in nodes { node.remove() }
    }
}
