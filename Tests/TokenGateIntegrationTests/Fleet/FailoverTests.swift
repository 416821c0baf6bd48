import Foundation
import IntegrationSupport
import Synchronization
import Testing

@testable import GateTestSupport

/// A Redis primary killed with `kill -9` under load, with four real
/// `tokengate serve` processes in front (docs/DESIGN.md#high-availability,
/// issue 21): Sentinel (one primary, two replicas, three sentinels) and
/// Cluster (three primaries, two replicas each), each with `primary` and
/// `replicated` durability.
///
/// A stream of distinct media tokens, each presented to one gate and at once
/// to the next; the primary is killed a second in; the stream runs on until
/// 3 s after the failover is detected. Then every gate must allow a fresh
/// token (no gate restarted), the old primary comes back as a replica, and
/// every token is presented a third time to a third gate. Asserted: every
/// answer is 200 VALID_TOKEN, 403 TOKEN_REPLAYED or 503 REPLAY_CHECK_UNAVAILABLE
/// (the 503s are told apart by the gate's X-Token-Status, never by the status
/// alone); no 503 before the kill; the last 503 sent no later than the
/// detection time + 1 s (detection: the kill to the first moment a sentinel
/// names the new primary, or a replica of the killed node answers `master` to
/// `ROLE`); in Cluster, no 503 ever for a token whose slot the killed node did
/// not serve, and readiness never red; in Sentinel, readiness red only until
/// detection + 2 s (one probe period and its deadline after the window); no
/// token allowed twice with `replicated` (with `primary`, counted and printed).
///
/// CI runs the four cases once: 72 s together on the 2-core machine (Sentinel
/// about 21 s a case, most of it the sentinels learning the replicas; Cluster
/// about 13 s); the two partition cases of ClusterPartitionTests.swift run in
/// the same suite. `TOKENGATE_FAILOVER_CASES` (a comma list such as
/// `sentinel-primary,cluster-replicated,cluster-cut-primary`; `all` by default) and
/// `TOKENGATE_FAILOVER_REPETITIONS=N` are for `Benchmarks/redis-ha`, which runs
/// every case N times and reads the `failover …` lines this test prints.
@Suite(
    .serialized,
    .enabled(if: Integration.redisHighAvailability, "redis-server, redis-sentinel or redis-cli not installed"),
    .enabled(if: GateProcess.binary != nil || Integration.required, "the tokengate executable is not built"),
    .holdsMachineLock
)
struct FailoverTests {
    enum Mode: String, Sendable, CaseIterable {
        case sentinel, cluster
        /// A Cluster primary cut off by a partition (ClusterPartitionTests.swift), not killed.
        case clusterCut = "cluster-cut"
    }

    struct Setup: Sendable, CustomTestStringConvertible {
        let mode: Mode
        let durability: String
        var name: String { "\(mode.rawValue)-\(durability)" }
        var testDescription: String { name }
    }

    static let environment = ProcessInfo.processInfo.environment
    static let repetitions = max(1, environment["TOKENGATE_FAILOVER_REPETITIONS"].flatMap(Int.init) ?? 1)
    static let setups = chosen([.sentinel, .cluster])

    /// The cases of `modes` that `TOKENGATE_FAILOVER_CASES` names.
    static func chosen(_ modes: [Mode]) -> [Setup] {
        let all = modes.flatMap { mode in ["primary", "replicated"].map { Setup(mode: mode, durability: $0) } }
        guard let chosen = environment["TOKENGATE_FAILOVER_CASES"], chosen != "all" else { return all }
        let names = Set(chosen.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return all.filter { names.contains($0.name) }
    }

    /// A misspelt `TOKENGATE_FAILOVER_CASES` would run nothing and pass.
    @Test func theChosenCasesAreKnownCases() {
        let known = Set(Mode.allCases.flatMap { mode in ["primary", "replicated"].map { "\(mode.rawValue)-\($0)" } })
        let chosen = (Self.environment["TOKENGATE_FAILOVER_CASES"] ?? "all").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(chosen == ["all"] || Set(chosen).isSubset(of: known), "TOKENGATE_FAILOVER_CASES names unknown cases; known: \(known.sorted())")
        #expect(!(Self.setups + Self.partitionSetups).isEmpty)
    }

    /// Per-request deadline for the replay store: long enough that a loaded
    /// machine's `WAIT` is not a 503 before the kill, short enough that
    /// requests to the dead primary give up well inside the window.
    static let replayTimeoutMilliseconds = 250

    @Test(arguments: setups)
    func aPrimaryKilledUnderLoad(_ setup: Setup) async throws {
        let started = Date()
        let topology: any FailoverTopology = try await offloaded {
            switch setup.mode {
            case .sentinel: try SentinelFailoverTopology() as any FailoverTopology
            case .cluster: try ClusterFailoverTopology() as any FailoverTopology
            case .clusterCut: throw RawHTTP.Failure(description: "a cut is aPrimaryCutOffFromItsReplicasAndTheOtherNodes's case")
            }
        }
        defer { topology.remove() }
        let gates = try await offloaded {
            try (0..<4).map { _ in
                try GateProcess([
                    "--replay", topology.url, "--replay-durability", setup.durability,
                    "--replay-timeout", String(Self.replayTimeoutMilliseconds),
                ])
            }
        }
        defer { gates.forEach { $0.stop() } }
        for repetition in 1...Self.repetitions {
            let run = try await offloaded { try Self.failOver(topology, gates: gates) }
            let measured = FailoverMeasurement(run, onVictim: topology.wasOnVictim)
            print("failover \(setup.name) repetition \(repetition)/\(Self.repetitions): \(measured.summary)")
            let context = "\(setup.name) repetition \(repetition): \(measured.summary)"

            #expect(
                measured.otherAnswers.isEmpty,
                "answers other than allowed, replayed or REPLAY_CHECK_UNAVAILABLE: \(measured.otherAnswers.prefix(5)); \(context)"
            )
            #expect(measured.unavailableBeforeKill == 0, "503s before the kill; \(context)")
            #expect(measured.unavailableAfterKill > 0, "no 503 at all: the stream did not reach the dead primary; \(context)")
            #expect(
                measured.lastUnavailable <= run.detection + 1000,
                "the last 503 was sent \(Int(measured.lastUnavailable)) ms after the kill, detection took \(Int(run.detection)) ms; \(context)"
            )
            #expect(measured.recovery != nil, "a gate never allowed a token of the failed shard after the last 503; \(context)")
            #expect(
                run.freshTokensAllowed.allSatisfy { $0 },
                "gates that refused a fresh token after the window: \(run.freshTokensAllowed); \(context)\n\(run.gateLogs.joined(separator: "\n"))"
            )
            #expect(measured.checkUnanswered == 0, "third presentations not answered allowed or replayed after the old primary came back; \(context)")
            if setup.durability == "replicated" {
                #expect(measured.doubleAllows.isEmpty, "tokens allowed twice: \(measured.doubleAllows.prefix(5)); \(context)")
            }
            #expect(measured.readinessRedBeforeKill == 0, "readiness red before the kill; \(context)")
            switch setup.mode {
            case .sentinel:
                #expect(
                    measured.lastReadinessRed <= run.detection + 2000,
                    "readiness red \(Int(measured.lastReadinessRed)) ms after the kill, detection \(Int(run.detection)) ms; \(context)"
                )
            case .cluster, .clusterCut:
                #expect(measured.unavailableOnHealthyShards == 0, "503s for tokens of healthy shards; \(context)")
                #expect(measured.readinessRedAfterKill == 0, "readiness red with two of three shards healthy; \(context)")
                #expect(run.slotCrossCheck.allSatisfy { $0.computed == $0.redis }, "CLUSTER KEYSLOT disagrees: \(run.slotCrossCheck)")
                #expect(measured.victimShardTokens > 0 && measured.healthyShardTokens > 0, "tokens on both kinds of shard; \(context)")
            }
        }
        print("failover \(setup.name): \(Self.repetitions) repetition(s) in \(Int(Date().timeIntervalSince(started))) s")
    }

    /// What one kill produced: every token and its presentations, the
    /// readiness samples, and the timings (ms since the stream started).
    struct Run: Sendable {
        var tokens: [FailoverStream.Token]
        var readiness: [FailoverStream.ReadinessSample]
        /// The kill, ms since the stream started.
        var killedAt: Double
        /// The kill to the failover's detection, ms.
        var detection: Double
        var freshTokensAllowed: [Bool]
        /// The store's lines of the log of each gate that refused a fresh token after the window.
        var gateLogs: [String]
        var slotCrossCheck: [(computed: Int, redis: Int)]
    }

    /// One failure under the stream; `rate` and `replayAfter` as in
    /// ``FailoverStream/begin(workers:pause:rate:replayAfter:)`` (the replays
    /// join each token's presentations after the third one).
    static func failOver(
        _ topology: any FailoverTopology,
        gates: [GateProcess],
        rate: Int? = nil,
        replayAfter: Duration? = nil
    ) throws -> Run {
        try topology.waitUntilPrimed()
        for gate in gates {
            let ready = eventually(within: 15) { try RawHTTP.get(port: gate.port, "/readyz").status == 200 }
            guard ready.held else { throw RawHTTP.Failure(description: "gate \(gate.port) not ready before the kill:\n\(gate.log.suffix(1500))") }
        }
        let stream = FailoverStream(ports: gates.map(\.port))
        stream.begin(rate: rate, replayAfter: replayAfter)
        usleep(1_000_000)
        let killedAt = stream.now()
        do {
            try topology.failPrimary()
        } catch {
            _ = try? stream.end()
            throw error
        }
        var detectedAt: Double?
        while detectedAt == nil, stream.now() - killedAt < 30_000 {
            if (try? topology.failoverDetected()) == true { detectedAt = stream.now() }
            usleep(20_000)
        }
        guard let detectedAt else {
            _ = try? stream.end()
            throw RawHTTP.Failure(description: "no new primary named within 30 s of the kill")
        }
        while stream.now() < detectedAt + 3000 { usleep(50_000) }
        let (tokens, readiness) = try stream.end()

        // Recovery without a restart: every gate allows a fresh token of the failed shard.
        var freshTokensAllowed: [Bool] = []
        var gateLogs: [String] = []
        for gate in gates {
            let client = KeepAliveHTTP(port: gate.port)
            let allowed = eventually(within: 5) {
                var forms = try FleetLoad.mediaTokenForms()
                while !topology.wasOnVictim(slot: try FailoverStream.slot(ofRawForm: forms[0])) { forms = try FleetLoad.mediaTokenForms() }
                return try client.get("/v1/auth-request", headers: [("X-Original-URI", "/a?token=\(forms[2])")]) == (200, "VALID_TOKEN")
            }
            freshTokensAllowed.append(allowed.held)
            if !allowed.held {
                // What the gate said about its store: the reason behind its 503s, for whoever debugs the client.
                let lines = gate.log.split(separator: "\n").filter { $0.contains("replay") || $0.contains("redis") || $0.contains("REPLAY") }
                let refusals = lines.filter { $0.contains("\"refused\"") }
                gateLogs.append(
                    "gate \(gate.port), the store's last lines other than refusals, then the last refusals:\n"
                        + lines.filter { !$0.contains("\"refused\"") }.suffix(8).joined(separator: "\n") + "\n"
                        + refusals.suffix(2).joined(separator: "\n") + "\nRedis now: " + topology.describe()
                )
            }
        }

        // The old primary back as a replica; then every token a third time, to a third gate.
        try topology.returnVictimAsReplica()
        var checked = tokens
        let next = Atomic(0)
        let results = Mutex([(Int, FailoverStream.Presentation)]())
        FleetLoad.runOnThreads(4) { _ in
            let clients = gates.map { KeepAliveHTTP(port: $0.port) }
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < tokens.count else { return }
                let token = tokens[index]
                let gate = (token.firstGate + 2) % gates.count
                let presentation = stream.present(token.forms[2], to: gate, over: clients[gate])
                results.withLock { $0.append((index, presentation)) }
            }
        }
        for (index, presentation) in results.withLock({ $0 }) { checked[index].presentations.append(presentation) }
        for (index, presentation) in stream.spentReplays() { checked[index].presentations.append(presentation) }

        var slotCrossCheck: [(computed: Int, redis: Int)] = []
        if let cluster = topology as? ClusterFailoverTopology {
            for token in tokens.prefix(3) {
                let key = String(decoding: try FailoverStream.replayKey(ofRawForm: token.forms[0]), as: UTF8.self)
                let answer = try Integration.redisCLI(["-p", String(cluster.cluster.nodes[1].port), "CLUSTER", "KEYSLOT", key])
                slotCrossCheck.append((token.slot, Int(answer.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1))
            }
        }
        return Run(
            tokens: checked,
            readiness: readiness,
            killedAt: killedAt,
            detection: detectedAt - killedAt,
            freshTokensAllowed: freshTokensAllowed,
            gateLogs: gateLogs,
            slotCrossCheck: slotCrossCheck
        )
    }
}

/// The figures of one ``FailoverTests/Run``, times in ms since the kill.
struct FailoverMeasurement {
    var otherAnswers: [String] = []
    var unavailableBeforeKill = 0
    var unavailableAfterKill = 0
    /// When the last 503 was sent.
    var lastUnavailable: Double = 0
    var unavailableOnHealthyShards = 0
    var victimShardTokens = 0
    var healthyShardTokens = 0
    /// When the last gate to do so first allowed a token of the failed shard
    /// sent after the last 503 (answered), or nil when a gate never did.
    var recovery: Double?
    /// Indexes of tokens with more than one 200.
    var doubleAllows: [Int] = []
    var allowedTokens = 0
    var checkUnanswered = 0
    var readinessRedBeforeKill = 0
    var readinessRedAfterKill = 0
    var lastReadinessRed: Double = 0
    let detection: Double
    let tokenCount: Int

    init(_ run: FailoverTests.Run, onVictim: (Int) -> Bool) {
        detection = run.detection
        tokenCount = run.tokens.count
        let known: Set<String> = [FailoverStream.allowed, FailoverStream.replayed, FailoverStream.unavailable]
        var firstAllowAfterWindow: [Int: Double] = [:]
        var allowsOnVictim: [(gate: Int, sentAt: Double, answeredAt: Double)] = []
        for (index, token) in run.tokens.enumerated() {
            let victim = onVictim(token.slot)
            if victim { victimShardTokens += 1 } else { healthyShardTokens += 1 }
            for (copy, presentation) in token.presentations.enumerated() {
                let sentAt = presentation.sentAt - run.killedAt
                if !known.contains(presentation.answer) { otherAnswers.append(presentation.answer) }
                if copy == 2, presentation.answer != FailoverStream.allowed, presentation.answer != FailoverStream.replayed {
                    checkUnanswered += 1
                }
                if presentation.answer == FailoverStream.unavailable {
                    if presentation.answeredAt < run.killedAt {
                        unavailableBeforeKill += 1
                    } else {
                        unavailableAfterKill += 1
                        lastUnavailable = max(lastUnavailable, sentAt)
                        if !victim { unavailableOnHealthyShards += 1 }
                    }
                }
                if presentation.answer == FailoverStream.allowed, victim, copy < 2 {
                    allowsOnVictim.append((presentation.gate, sentAt, presentation.answeredAt - run.killedAt))
                }
            }
            let allows = token.presentations.filter { $0.answer == FailoverStream.allowed }.count
            if allows > 0 { allowedTokens += 1 }
            if allows > 1 { doubleAllows.append(index) }
        }
        for allow in allowsOnVictim where allow.sentAt > lastUnavailable {
            firstAllowAfterWindow[allow.gate] = min(firstAllowAfterWindow[allow.gate] ?? .infinity, allow.answeredAt)
        }
        let gateCount = Set(run.readiness.map(\.gate)).count
        recovery = firstAllowAfterWindow.count == gateCount ? firstAllowAfterWindow.values.max() : nil
        for sample in run.readiness where sample.status != 200 {
            let at = sample.at - run.killedAt
            if at < 0 {
                readinessRedBeforeKill += 1
            } else {
                readinessRedAfterKill += 1
                lastReadinessRed = max(lastReadinessRed, at)
            }
        }
    }

    var summary: String {
        "detection \(Int(detection)) ms, 503 window \(Int(lastUnavailable)) ms (\(unavailableAfterKill) REPLAY_CHECK_UNAVAILABLE"
            + ", \(unavailableOnHealthyShards) on healthy shards), recovery \(recovery.map { "\(Int($0)) ms" } ?? "never")"
            + ", double allows \(doubleAllows.count) of \(allowedTokens) allowed tokens, \(tokenCount) tokens"
            + " (\(victimShardTokens) on the failed shard), readiness red \(readinessRedAfterKill) samples"
            + (readinessRedAfterKill > 0 ? " until \(Int(lastReadinessRed)) ms" : "")
            + (otherAnswers.isEmpty ? "" : ", \(otherAnswers.count) other answers")
    }
}
