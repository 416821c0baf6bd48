import Foundation
import IntegrationSupport

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The bench of GateRedisFaultTests: one `redis-server` in a network namespace
/// of its own (``NetworkNamespaces``, host 10.77.0.10), and in the hub two
/// `tokengate serve` processes with `--replay-timeout` ``replayTimeoutMilliseconds``:
/// ``direct`` writes to Redis across the veth, where `iptables` rules in
/// Redis's namespace drop packets; ``relayed`` writes through a
/// ``ReplyDelayRelay`` on the hub's loopback, which holds Redis's replies.
/// Made on a thread in the hub (``NetworkNamespaces/inHub(_:)``); removed by
/// ``remove()``, which kills what it started by pid and deletes the namespaces.
final class RedisFaultBench: @unchecked Sendable {
    static let replayTimeoutMilliseconds = 250
    static let redisPort = 6379

    let network: NetworkNamespaces
    let namespace: String
    let address: String
    let directory: URL
    private(set) var redisArguments: [String]
    private var redis: Process?
    private(set) var relay: ReplyDelayRelay?
    private(set) var direct: GateProcess?
    private(set) var relayed: GateProcess?

    init(_ network: NetworkNamespaces) throws {
        guard Integration.redisServerPath != nil, Integration.redisCLIPath != nil else {
            throw RedisServerError(description: "redis-server or redis-cli not installed, and TOKENINSPECT_INTEGRATION=require")
        }
        self.network = network
        (namespace, address) = try network.addHost()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        redisArguments = [
            "--bind", address, "--port", String(Self.redisPort), "--protected-mode", "no",
            "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxmemory-policy", "noeviction",
            "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
        ]
        do {
            try launchRedis()
            relay = try ReplyDelayRelay(upstreamAddress: address, upstreamPort: Self.redisPort)
            let timeout = ["--replay-timeout", String(Self.replayTimeoutMilliseconds)]
            direct = try GateProcess(["--replay", "redis://\(address):\(Self.redisPort)"] + timeout, in: network)
            relayed = try GateProcess(["--replay", "redis://127.0.0.1:\(relay!.port)"] + timeout, in: network)
        } catch {
            remove()
            throw error
        }
    }

    private func launchRedis() throws {
        let process = try network.launch(namespace, Integration.redisServerPath ?? "redis-server", redisArguments)
        redis = process
        try Integration.waitUntil("redis-server on \(address) answers", seconds: 10) {
            guard process.isRunning else { throw RedisServerError(description: "redis-server exited: \(log.suffix(600))") }
            return (try? cli(["PING"]))?.contains("PONG") == true
        }
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? "" }

    /// `redis-cli` against the server, run in the hub.
    @discardableResult
    func cli(_ arguments: [String]) throws -> String {
        try network.run(network.hub, Integration.redisCLIPath ?? "redis-cli", ["-h", address, "-p", String(Self.redisPort)] + arguments)
    }

    /// SIGKILL: a crash, nothing flushed beyond what `appendfsync` already wrote.
    func killRedis() {
        guard let redis, redis.isRunning else { return }
        kill(redis.processIdentifier, SIGKILL)
        redis.waitUntilExit()
        self.redis = nil
    }

    /// Starts it again on the same address, with `arguments` appended to the
    /// start-up options from now on (`--appendonly yes`…).
    func startRedis(adding arguments: [String] = []) throws {
        killRedis()
        redisArguments += arguments
        try launchRedis()
    }

    func signalRedis(_ signal: Int32) {
        if let redis { kill(redis.processIdentifier, signal) }
    }

    /// Every packet between Redis's namespace and the hub dropped with
    /// probability `probability` each way (`iptables -m statistic`), or all
    /// of them at 1 (a blackhole: no RST, no ICMP).
    func drop(probability: Double) throws {
        let match =
            probability >= 1 ? [] : ["-m", "statistic", "--mode", "random", "--probability", String(format: "%.2f", probability)]
        let iptables = NetworkNamespaces.iptables ?? "iptables"
        try network.run(namespace, iptables, ["-w", "-A", "INPUT", "-s", NetworkNamespaces.hubAddress] + match + ["-j", "DROP"])
        try network.run(namespace, iptables, ["-w", "-A", "OUTPUT", "-d", NetworkNamespaces.hubAddress] + match + ["-j", "DROP"])
    }

    /// Removes the rules of ``drop(probability:)``.
    func heal() throws { try network.heal(namespace) }

    /// Stops the gates, the relay and Redis by pid, then deletes the namespaces and the directory.
    func remove() {
        direct?.stop()
        relayed?.stop()
        relay?.stop()
        if let redis, redis.isRunning {
            // A paused Redis takes SIGKILL too.
            kill(redis.processIdentifier, SIGKILL)
            redis.waitUntilExit()
        }
        redis = nil
        try? FileManager.default.removeItem(at: directory)
        network.remove()
    }
}
