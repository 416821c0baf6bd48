import EntitlementTokens
import EntitlementTokensRedis
import Foundation
import IntegrationSupport
import RedisRESP
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// One-time use across the fleet (docs/DESIGN.md#one-time-use-across-a-fleet, issue 14): real `tokengate serve`
/// processes sharing one real `redis-server`, all on 127.0.0.1. Skipped with
/// the reason when redis-server is missing, failed when
/// `TOKENINSPECT_INTEGRATION=require`.
///
/// `TOKENGATE_FLEET_TOKENS` and `TOKENGATE_FLEET_REPETITIONS` scale the
/// exactly-once test (250 tokens, once, by default); `Benchmarks/fleet` runs
/// the full figure, 10,000 tokens × 8 sends, 20 times.
@Suite(
    .serialized,
    .enabled(if: Integration.redis, "redis-server not installed"),
    .enabled(if: GateProcess.binary != nil || Integration.required, "the tokengate executable is not built"),
    .holdsMachineLock
)
struct FleetTests {
    static let environment = ProcessInfo.processInfo.environment
    static let tokenCount = environment["TOKENGATE_FLEET_TOKENS"].flatMap(Int.init) ?? 250
    static let repetitions = environment["TOKENGATE_FLEET_REPETITIONS"].flatMap(Int.init) ?? 1
    static let sends = 8

    /// Starts `count` gates with `arguments`, each waiting until it serves.
    func gates(_ count: Int, _ arguments: [String]) async throws -> [GateProcess] {
        try await offloaded { try (0..<count).map { _ in try GateProcess(arguments) } }
    }

    func waitUntilReady(_ gates: [GateProcess]) async throws {
        for gate in gates {
            let ready = try await offloaded { eventually(within: 10) { try RawHTTP.get(port: gate.port, "/readyz").status == 200 } }
            #expect(ready.held, "gate \(gate.port) not ready:\n\(gate.log.suffix(1000))")
        }
    }

    @Test func everyMediaTokenIsAllowedExactlyOnceAcrossFourGatesOnOneRedis() async throws {
        try await withRedisServer { redis in
            // Exactly once is what is measured, not latency: a deadline of 2 s keeps
            // a machine busy with other suites from turning a slow answer into a
            // 503 (REPLAY_CHECK_UNAVAILABLE is never an allow, but it is not the figure).
            let gates = try await gates(4, ["--replay", redis.url, "--replay-timeout", "2000"])
            defer { gates.forEach { $0.stop() } }
            try await waitUntilReady(gates)
            let count = Self.tokenCount
            for repetition in 1...Self.repetitions {
                let tokens = try await offloaded { try FleetLoad.mintMediaTokens(count) }
                let start = Date()
                let tally = try await offloaded { FleetLoad.send(tokens, sends: Self.sends, ports: gates.map(\.port)) }
                let seconds = Date().timeIntervalSince(start)
                print(
                    String(
                        format: "fleet repetition %d/%d: %d tokens x %d sends over %d gates in %.2f s (%.0f requests/s): %@",
                        repetition,
                        Self.repetitions,
                        count,
                        Self.sends,
                        gates.count,
                        seconds,
                        Double(tally.total) / seconds,
                        tally.description
                    )
                )
                #expect(tally["200 VALID_TOKEN"] == count, "repetition \(repetition): \(tally)")
                #expect(tally["403 TOKEN_REPLAYED"] == (Self.sends - 1) * count, "repetition \(repetition): \(tally)")
                #expect(tally.total == Self.sends * count, "repetition \(repetition): \(tally)")
            }
        }
    }

    @Test func theSharedStoreDecidesNotAProcessOfItsOwn() async throws {
        try await withRedisServer { redis in
            let shared = try await gates(3, ["--replay", redis.url])
            let alone = try await gates(1, ["--replay", "memory"])[0]
            defer { (shared + [alone]).forEach { $0.stop() } }
            try await waitUntilReady(shared + [alone])
            let token = try FleetLoad.mediaTokenForms()[2]
            func send(_ gate: GateProcess) async throws -> String {
                let answer = try await RawHTTP.fetch(
                    port: gate.port,
                    "/v1/auth-request",
                    headers: [("X-Original-URI", "/live/tnt.m3u8?token=\(token)")]
                )
                return "\(answer.status) \(answer.tokenStatus ?? "-")"
            }
            // The in-memory gate knows only itself: it allows the token once.
            #expect(try await send(alone) == "200 VALID_TOKEN")
            // Redis has not seen it: the first shared gate allows it…
            #expect(try await send(shared[0]) == "200 VALID_TOKEN")
            // …and the others refuse a token they never saw, because Redis has it.
            #expect(try await send(shared[1]) == "403 TOKEN_REPLAYED")
            #expect(try await send(shared[2]) == "403 TOKEN_REPLAYED")
            #expect(try await send(shared[0]) == "403 TOKEN_REPLAYED")
            #expect(try await send(alone) == "403 TOKEN_REPLAYED")
        }
    }

    @Test func redisDownRefusesMediaTokensKeepsAuthorizationTokensAndRecoversWithoutARestart() async throws {
        try await withRedisServer { redis in
            let gate = try await gates(1, ["--replay", redis.url, "--replay-timeout", "50"])[0]
            defer { gate.stop() }
            try await waitUntilReady([gate])
            try await offloaded {
                let client = KeepAliveHTTP(port: gate.port)
                func media() throws -> (status: Int, tokenStatus: String?) {
                    try client.get("/v1/auth-request", headers: [("X-Original-URI", "/a?token=\(try FleetLoad.mediaTokenForms()[2])")])
                }
                #expect(try media() == (200, "VALID_TOKEN"))

                redis.stop()
                for _ in 0..<20 {
                    let start = Date()
                    let answer = try media()
                    let seconds = Date().timeIntervalSince(start)
                    #expect(answer == (503, "REPLAY_CHECK_UNAVAILABLE"))
                    // The deadline is 50 ms; the bound is generous for a loaded machine.
                    #expect(seconds < 1.5, "a refusal took \(seconds) s")
                }
                let red = eventually(within: 5) { try RawHTTP.get(port: gate.port, "/readyz").status == 503 }
                #expect(red.held, "readiness still green \(red.after) s after Redis stopped")
                // docs/DESIGN.md#operators: /readyz names the store and the cause in
                // plain words, never SwiftNIO's types; the header that travels
                // toward the player names no internal address at all.
                let readiness = try RawHTTP.get(port: gate.port, "/readyz").body
                #expect(readiness.contains("redis") && readiness.contains("127.0.0.1:\(redis.port)"), "\(readiness)")
                #expect(readiness.contains("connection refused"), "\(readiness)")
                #expect(!readiness.contains("NIO") && !readiness.contains("SingleConnectionFailure"), "\(readiness)")
                let refusal = try RawHTTP.get(
                    port: gate.port,
                    "/v1/auth-request",
                    headers: [("X-Original-URI", "/a?token=\(try FleetLoad.mediaTokenForms()[1])")]
                )
                let header = try #require(refusal["X-Token-Reason"]).removingPercentEncoding ?? ""
                #expect(refusal.status == 503 && header.contains("replay store did not answer"), "\(header)")
                #expect(!header.contains("\(redis.port)") && !header.contains("127.0.0.1") && !header.contains("NIO"), "\(header)")
                // Authorization tokens never touch the replay store.
                let authorization = try client.get(
                    "/v1/auth-request",
                    headers: [("X-Original-URI", "/a?token=\(Self.authorizationToken())")]
                )
                #expect(authorization == (200, "VALID_TOKEN"))

                try redis.restart()
                let resumed = eventually(within: 5) { try media() == (200, "VALID_TOKEN") }
                #expect(resumed.held, "media tokens still refused \(resumed.after) s after Redis came back")
                let green = eventually(within: 5) { try RawHTTP.get(port: gate.port, "/readyz").status == 200 }
                #expect(green.held, "readiness still red \(green.after) s after Redis came back")
            }
        }
    }

    @Test func aFrozenOrFullRedisRefusesMediaTokensAndNeverAllowsOneTwice() async throws {
        try await withRedisServer(["--maxmemory-policy", "noeviction"]) { redis in
            let gate = try await gates(1, ["--replay", redis.url, "--replay-timeout", "50"])[0]
            defer { gate.stop() }
            try await waitUntilReady([gate])
            let admin = try RedisClient(configuration: RedisClientConfiguration(url: redis.url))
            @Sendable func media(_ token: String) throws -> (status: Int, tokenStatus: String?) {
                try KeepAliveHTTP(port: gate.port).get("/v1/auth-request", headers: [("X-Original-URI", "/a?token=\(token)")])
            }
            // Frozen (SIGSTOP: connections and bytes accepted, nothing answers).
            let frozenTokens = try (0..<5).map { _ in try FleetLoad.mediaTokenForms()[2] }
            redis.pause()
            try await offloaded {
                defer { redis.resume() }
                for token in frozenTokens {
                    let start = Date()
                    let answer = try media(token)
                    #expect(answer == (503, "REPLAY_CHECK_UNAVAILABLE"))
                    let seconds = Date().timeIntervalSince(start)
                    #expect(seconds < 1.5, "a refusal took \(seconds) s")
                }
                let red = eventually(within: 5) { try RawHTTP.get(port: gate.port, "/readyz").status == 503 }
                #expect(red.held, "readiness still green \(red.after) s into the freeze")
            }
            // Thawed: a SET that was sent during the freeze may have been applied
            // late (docs/REDIS.md), so a frozen-out token is allowed at most once.
            try await offloaded {
                let fresh = try FleetLoad.mediaTokenForms()[2]
                let resumed = eventually(within: 5) { try media(fresh) == (200, "VALID_TOKEN") }
                #expect(resumed.held, "media tokens still refused \(resumed.after) s after SIGCONT")
                for token in frozenTokens {
                    let answers = try (0..<3).map { _ in try media(token) }
                    #expect(answers.filter { $0 == (200, "VALID_TOKEN") }.count <= 1, "\(answers)")
                    #expect(answers.dropFirst().allSatisfy { $0 == (403, "TOKEN_REPLAYED") }, "\(answers)")
                }
            }
            // Full (maxmemory under noeviction): OOM is 503, and the refused write
            // was not applied, so the token is allowed once Redis has room again.
            #expect(try await admin.send(RESPCommand(["CONFIG", "SET", "maxmemory", "1"].map { Array($0.utf8) })).isOK)
            let full = try FleetLoad.mediaTokenForms()[2]
            try await offloaded {
                for _ in 0..<3 {
                    let answer = try media(full)
                    #expect(answer == (503, "REPLAY_CHECK_UNAVAILABLE"))
                }
                let logged = eventually(within: 2) { gate.log.contains("OOM") }
                #expect(logged.held, "the refusal's reason is not logged:\n\(gate.log.suffix(1500))")
            }
            #expect(try await admin.send(RESPCommand(["CONFIG", "SET", "maxmemory", "0"].map { Array($0.utf8) })).isOK)
            try await offloaded {
                let answers = try [media(full), media(full)]
                #expect(answers[0] == (200, "VALID_TOKEN") && answers[1] == (403, "TOKEN_REPLAYED"), "\(answers)")
            }
            await admin.shutdown()
        }
    }

    /// docs/DESIGN.md#cat-at-the-origin: a CAT with catreplay 1 is spent in
    /// the fleet's one store on its cti, as a media token is on its bytes;
    /// a store that is down refuses it (503), never allows it.
    @Test func aOneUseCATIsAllowedOnceAcrossTwoGatesOnOneRedis() async throws {
        try await withRedisServer { redis in
            let gates = try await gates(
                2,
                [
                    "--replay", redis.url, "--replay-timeout", "50",
                    "--cat-key", "\(CATGateFixtures.hmacPath) edge-1",
                ]
            )
            defer { gates.forEach { $0.stop() } }
            try await waitUntilReady(gates)
            try await offloaded {
                func cat() -> String {
                    CATGateFixtures.token(
                        now: CATGateFixtures.seconds(TokenTimestamp.now()),
                        [CATGateFixtures.claim(.catreplay, .integer(1))]
                    )
                }
                func send(_ gate: GateProcess, _ cat: String) throws -> RawHTTP.Answer {
                    try RawHTTP.get(
                        port: gate.port,
                        "/v1/auth-request",
                        headers: [("X-Original-URI", "/hls/tnt/seg1.ts"), ("CTA-Common-Access-Token", cat)]
                    )
                }
                let once = cat()
                let first = try send(gates[0], once)
                #expect(first.status == 200 && first.tokenStatus == "VALID_TOKEN", "\(first.headers)")
                let second = try send(gates[1], once)
                #expect(second.status == 403 && second.tokenStatus == "TOKEN_REPLAYED", "\(second.headers)")
                // Another CAT is another cti.
                #expect(try send(gates[1], cat()).tokenStatus == "VALID_TOKEN")

                redis.stop()
                let down = try send(gates[0], cat())
                #expect(down.status == 503 && down.tokenStatus == "REPLAY_CHECK_UNAVAILABLE", "\(down.headers)")
            }
        }
    }

    @Test func failOpenAcceptsCountsAndLogsWhileRedisIsUnreachable() async throws {
        // Nothing listens on this port: the gate starts anyway, readiness red.
        let port = try RedisServer.freePort()
        let gate = try await gates(1, ["--replay", "redis://127.0.0.1:\(port)", "--replay-failure", "open"])[0]
        defer { gate.stop() }
        try await offloaded {
            #expect(try RawHTTP.get(port: gate.port, "/readyz").status == 503)
            #expect(gate.log.contains("replay store not answering"))
            func failOpenCount() -> Double? { ScrapedMetrics(port: gate.port)?["tokengate_replay_fail_open_total"] }
            let before = failOpenCount() ?? 0
            for _ in 0..<3 {
                let token = try FleetLoad.mediaTokenForms()[2]
                let answer = try RawHTTP.get(port: gate.port, "/v1/auth-request", headers: [("X-Original-URI", "/a?token=\(token)")])
                #expect(answer.status == 200)
                #expect(answer.tokenStatus == "VALID_TOKEN")
            }
            #expect(failOpenCount() == before + 3)
            let logged = eventually(within: 2) { gate.log.components(separatedBy: "\"token_id\"").count - 1 >= 3 }
            #expect(logged.held, "fewer than 3 token ids logged:\n\(gate.log.suffix(2000))")
        }
    }

    @Test func aWrongPasswordIsAClearStartUpErrorThatNeverShowsThePassword() async throws {
        try await withRedisServer(["--requirepass", "the-right-one"]) { redis in
            let wrong = try Self.secretFile("not-the-password")
            defer { try? FileManager.default.removeItem(atPath: wrong) }
            for (url, cause) in [
                ("redis://127.0.0.1:\(redis.port)?password-file=\(wrong)", "refused the login"),
                ("redis://127.0.0.1:\(redis.port)", "wants a password"),
            ] {
                let gate = try GateProcess(["--replay", url], waitUntilServing: false)
                defer { gate.stop() }
                let status = try await offloaded { gate.waitForExit(seconds: 20) }
                #expect(status != nil && status != 0, "the gate did not exit: \(gate.log.suffix(1000))")
                let log = gate.log
                #expect(log.contains("cannot start"))
                #expect(log.contains(cause), "\(log.suffix(1000))")
                #expect(log.contains("authenticationFailed"))
                #expect(!log.contains("not-the-password"))
                #expect(!log.contains("the-right-one"))
            }
            // A password in an argument (every user sees it in ps) stops the start before any connection.
            let gate = try GateProcess(["--replay", "redis://:the-right-one@127.0.0.1:\(redis.port)"], waitUntilServing: false)
            defer { gate.stop() }
            let status = try await offloaded { gate.waitForExit(seconds: 20) }
            #expect(status != nil && status != 0, "the gate did not exit: \(gate.log.suffix(1000))")
            #expect(gate.log.contains("command line") && gate.log.contains("password-file="), "\(gate.log.suffix(1000))")
            #expect(!gate.log.contains("the-right-one"))
        }
    }

    /// A 0600 file holding `secret`, as `LoadCredential=` would give the gate.
    static func secretFile(_ secret: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("redis-password-\(UUID().uuidString)").path
        try (secret + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    @Test func aUserThatMayPingButNotWriteTheKeysIsAClearStartUpError() async throws {
        let users = [
            "--user", "reader", "on", ">readpw", "~*", "+get", "+ping",
            "--user", "elsewhere", "on", ">elsepw", "~other:*", "+set", "+ping",
            "--user", "gate", "on", ">gatepw", "~tokeninspect:replay:*", "+set", "+ping",
        ]
        try await withRedisServer(users) { redis in
            for user in ["reader", "elsewhere"] {
                let password = try Self.secretFile("\(user.prefix(4))pw")
                defer { try? FileManager.default.removeItem(atPath: password) }
                let gate = try GateProcess(
                    ["--replay", "redis://\(user)@127.0.0.1:\(redis.port)?password-file=\(password)"],
                    waitUntilServing: false
                )
                defer { gate.stop() }
                let status = try await offloaded { gate.waitForExit(seconds: 20) }
                #expect(status == 2, "\(user): the gate did not exit 2: \(gate.log.suffix(1000))")
                let log = gate.log
                #expect(log.contains("cannot start") && log.contains("NOPERM"), "\(user): \(log.suffix(1000))")
                #expect(!log.contains("\(user.prefix(4))pw"), "the password is in the log")
            }
            // The least the docs ask for is enough.
            let password = try Self.secretFile("gatepw")
            defer { try? FileManager.default.removeItem(atPath: password) }
            let gate = try GateProcess(["--replay", "redis://gate@127.0.0.1:\(redis.port)?password-file=\(password)"])
            defer { gate.stop() }
            let answer = try RawHTTP.get(port: gate.port, "/readyz")
            #expect(answer.status == 200, "\(gate.log.suffix(1000))")
        }
    }

    /// The TLS forms through real gates: every node on a TLS port only, the CA
    /// named in the URL (`tls-ca-file=`, the gate's one way to trust a private
    /// CA); a CA that signed nothing there stops the start.
    @Test(
        .enabled(if: Integration.redisHighAvailability, "redis-sentinel or redis-cli not installed"),
        arguments: ["sentinel", "cluster"]
    )
    func theTLSFormsOfSentinelAndClusterAllowEachMediaTokenOnce(mode: String) async throws {
        let tls = try RedisTLSFiles()
        defer { tls.remove() }
        let url: String
        let remove: () -> Void
        if mode == "sentinel" {
            let group = try RedisSentinelGroup(replicaCount: 1, sentinelCount: 1, tls: tls)
            (url, remove) = (group.url.replacingOccurrences(of: "#", with: "?tls-ca-file=\(tls.caFile)#"), group.remove)
        } else {
            let cluster = try RedisClusterGroup(primaries: 3, replicasEach: 0, tls: tls)
            (url, remove) = (cluster.url + "?tls-ca-file=\(tls.caFile)", cluster.remove)
        }
        defer { remove() }
        #expect(url.hasPrefix("rediss-\(mode)://"))
        let gates = try await gates(2, ["--replay", url, "--replay-timeout", "500"])
        defer { gates.forEach { $0.stop() } }
        try await waitUntilReady(gates)
        let count = 30
        let tokens = try await offloaded { try FleetLoad.mintMediaTokens(count) }
        let tally = try await offloaded { FleetLoad.send(tokens, sends: 2, ports: gates.map(\.port)) }
        #expect(tally["200 VALID_TOKEN"] == count, "\(mode): \(tally)")
        #expect(tally["403 TOKEN_REPLAYED"] == count, "\(mode): \(tally)")

        let untrusted = url.replacingOccurrences(of: tls.caFile, with: tls.otherCAFile)
        let refused = try GateProcess(["--replay", untrusted], waitUntilServing: false)
        defer { refused.stop() }
        let status = try await offloaded { refused.waitForExit(seconds: 20) }
        #expect(status == 2, "\(mode): a gate that cannot verify the nodes started: \(refused.log.suffix(1000))")
        #expect(refused.log.contains("tlsFailed"), "\(refused.log.suffix(1000))")
    }

    @Test func shutdownClosesTheRedisClientAfterTheServerStops() async throws {
        try await withRedisServer { redis in
            let runtime = try GateFixtures.runtime(["--replay", redis.url, "--shutdown-grace", "0"])
            let store = try #require(runtime.replay.store as? RedisReplayStore)
            let group = runtime.serviceGroup(port: 0)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                #expect(await runtime.readiness.notReadyReason() == nil)  // a PING through the gate's own client
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            do throws(RedisClientError) {
                try await store.client.ping()
                Issue.record("the gate's Redis client still answers after shutdown")
            } catch {
                #expect(error.code == .shutDown)
            }
        }
    }

    static func authorizationToken() -> String {
        var request = GateFixtures.request(.authorization)
        request.issueTime = TokenTimestamp.now()
        request.ttlMilliseconds = 600_000
        return GateFixtures.token(request)
    }
}
