import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

#if canImport(Glibc)
import Glibc
#endif

/// `tokengate check`'s replay store part against real `redis-server` and
/// `redis-sentinel` processes (docs/DESIGN.md#redis-settings, docs/REDIS.md):
/// a failure is named by mode and address, as `/readyz` names it.
@Suite(
    .serialized,
    .enabled(if: Integration.redis, "redis-server not installed"),
    .enabled(if: ExecutableTests.binary != nil || Integration.required, "the tokengate executable is not built"),
    .holdsMachineLock
)
struct CheckReplayStoreTests {
    static func check(replay url: String) async throws -> (status: Int32, output: String) {
        try await CheckCommandTests.check(["--key", GateFixtures.publicKey, "--requestor", "TNT", "--resource", "TNT", "--replay", url])
    }

    /// A Redis that wants `password`, and a store URL whose password file (mode 600) holds `given`.
    static func withRedis(password: String, given: String, _ body: (RedisServer, String) async throws -> Void) async throws {
        try await withRedisServer(["--requirepass", password]) { redis in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("check-redis-\(UUID().uuidString)").path
            try Data((given + "\n").utf8).write(to: URL(fileURLWithPath: file))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            defer { try? FileManager.default.removeItem(atPath: file) }
            try await body(redis, "redis://127.0.0.1:\(redis.port)?password-file=\(file)")
        }
    }

    @Test func aRedisThatAnswersUnderNoevictionIsReady() async throws {
        try await Self.withRedis(password: "the-password", given: "the-password") { redis, url in
            let (status, output) = try await Self.check(replay: url)
            #expect(status == 0, "\(output)")
            #expect(output.contains("ok       redis 127.0.0.1:\(redis.port): answers, accepts the login"), "\(output)")
            #expect(output.contains("ok       redis 127.0.0.1:\(redis.port): maxmemory-policy noeviction"), "\(output)")
            #expect(!output.contains("the-password"))
        }
    }

    @Test func anUnreachableRedisIsAProblemNamedByModeAndAddress() async throws {
        let port = try RawHTTP.freePort()
        let (status, output) = try await Self.check(replay: "redis://127.0.0.1:\(port)")
        #expect(status == 1, "\(output)")
        let problems = CheckCommandTests.problemList(output)
        #expect(
            problems.count == 1 && problems[0].hasPrefix("  1. redis 127.0.0.1:\(port): ") && problems[0].contains("connection refused"),
            "\(output)"
        )
    }

    /// As the image, the hardened unit and a Kubernetes pod run it: another
    /// user than root, every capability dropped. A socket option that needs
    /// one (SO_DEBUG wants CAP_NET_ADMIN, and `.socketOption(.tcp_nodelay)`
    /// is SO_DEBUG: SOL_SOCKET level, TCP_NODELAY's number) fails every
    /// connection there with "permission denied", where root connects.
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv (util-linux) to drop to a user without capabilities"
        )
    )
    func aGateWithoutCapabilitiesReachesRedis() async throws {
        try await withRedisServer { redis in
            let binary = try #require(ExecutableTests.binary)
            let result = try await offloaded {
                try Shell.run([
                    "/usr/bin/setpriv", "--reuid", "65532", "--regid", "65532", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                    binary.path, "check", "--key", GateFixtures.publicKey, "--requestor", "TNT", "--resource", "TNT",
                    "--replay", "redis://127.0.0.1:\(redis.port)",
                ])
            }
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("ok       redis 127.0.0.1:\(redis.port): answers"), "\(result.output)")
        }
    }

    @Test func aWrongPasswordIsAProblem() async throws {
        try await Self.withRedis(password: "the-right-one", given: "not-the-password") { redis, url in
            let (status, output) = try await Self.check(replay: url)
            #expect(status == 1, "\(output)")
            let problems = CheckCommandTests.problemList(output)
            #expect(problems.count == 1 && problems[0].contains("redis 127.0.0.1:\(redis.port): ") && problems[0].contains("WRONGPASS"), "\(output)")
            #expect(!output.contains("not-the-password"))
        }
    }

    /// Every policy but noeviction lets Redis delete replay entries; the
    /// `volatile-*` ones delete exactly the keys with an expiry, which every entry has.
    @Test(arguments: ["allkeys-lru", "volatile-ttl"])
    func anEvictingPolicyIsAProblem(policy: String) async throws {
        try await withRedisServer(["--maxmemory-policy", policy]) { redis in
            let (status, output) = try await Self.check(replay: "redis://127.0.0.1:\(redis.port)")
            #expect(status == 1, "\(output)")
            let problems = CheckCommandTests.problemList(output)
            #expect(
                problems.count == 1 && problems[0].contains("redis 127.0.0.1:\(redis.port): maxmemory-policy \(policy) evicts replay entries"),
                "\(output)"
            )
        }
    }

    @Test func aServerThatRefusesCONFIGLeavesThePolicyUnknownAsAWarning() async throws {
        try await withRedisServer(["--rename-command", "CONFIG", ""]) { redis in
            let (status, output) = try await Self.check(replay: "redis://127.0.0.1:\(redis.port)")
            #expect(status == 0, "\(output)")
            #expect(output.contains("WARNING  redis 127.0.0.1:\(redis.port): maxmemory-policy unknown: the server refused CONFIG GET"), "\(output)")
        }
    }

    @Test func sentinelsAreAskedForThePrimaryAndItsReplicas() async throws {
        let group = try await offloaded { try RedisSentinelGroup(replicaCount: 1, sentinelCount: 2) }
        defer { group.remove() }
        let (status, output) = try await Self.check(replay: group.url)
        #expect(status == 0, "\(output)")
        for sentinel in group.sentinels {
            #expect(
                output.contains(
                    "redis-sentinel 127.0.0.1:\(sentinel.port): names primary 127.0.0.1:\(group.primary.port) of mymaster, "
                        + "replicas 127.0.0.1:\(group.replicas[0].port)"
                ),
                "\(output)"
            )
        }
        for node in [group.primary] + group.replicas {
            #expect(output.contains("redis 127.0.0.1:\(node.port): maxmemory-policy noeviction"), "\(output)")
        }
        // A sentinel that does not answer is named, by its address.
        group.sentinels[1].stop()
        let (downStatus, downOutput) = try await Self.check(replay: group.url)
        #expect(downStatus == 1, "\(downOutput)")
        let problems = CheckCommandTests.problemList(downOutput)
        #expect(
            problems.count == 1 && problems[0].contains("redis-sentinel 127.0.0.1:\(group.sentinels[1].port): ")
                && problems[0].contains("connection refused"),
            "\(downOutput)"
        )
    }

    @Test func aClusterWithEverySlotCoveredIsReadyAndAShardDownIsNamed() async throws {
        let cluster = try await offloaded { try RedisClusterGroup(primaries: 3, replicasEach: 0) }
        defer { cluster.remove() }
        let (status, output) = try await Self.check(replay: cluster.url)
        #expect(status == 0, "\(output)")
        #expect(output.contains(": all 16384 slots covered by primaries "), "\(output)")
        for node in cluster.nodes {
            #expect(output.contains("redis 127.0.0.1:\(node.port): maxmemory-policy noeviction"), "\(output)")
        }
        // A primary without a replica stops (not one of the URL's seeds): once
        // the others mark it failed, its slots have no primary. (Gossip on a
        // loaded CI once took longer than 20 s to say so.)
        let victim = cluster.nodes[2]
        victim.stop()
        try await offloaded {
            try Integration.waitUntil("the cluster marks the stopped primary failed", seconds: 60) {
                try Integration.redisCLI(["-p", String(cluster.nodes[0].port), "CLUSTER", "INFO"]).contains("cluster_slots_fail:0") == false
            }
        }
        let (downStatus, downOutput) = try await Self.check(replay: cluster.url)
        #expect(downStatus == 1, "\(downOutput)")
        #expect(
            CheckCommandTests.problemList(downOutput).contains { $0.contains(" of 16384 slots have no primary that answers (slots ") },
            "\(downOutput)"
        )
    }
}
