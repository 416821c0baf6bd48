import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

/// A Cluster shard's primary cut off from its replicas and from every other
/// node while the gates still reach it (docs/REDIS.md, "What each level can
/// lose"; docs/DESIGN.md#high-availability; issue 34): the failure a kill does
/// not show, since the cut-off primary keeps answering the gates until it
/// notices it is in the minority (`cluster-node-timeout`) and meanwhile
/// accepts writes its replicas never receive.
///
/// Built from network namespaces the test makes (``NetworkNamespaces``):
/// nine `redis-server` processes, each in a namespace of its own behind a
/// bridge, and four real `tokengate serve` processes in the bridge's own
/// namespace; the cut is `iptables` DROP rules in the victim's namespace,
/// between its address and the other nodes' only. The stream is that of
/// ``FailoverTests/aPrimaryKilledUnderLoad(_:)`` at a fixed rate, plus a
/// replay of every token 3 s after it was sent; after the failover the
/// partition heals, the old primary turns replica of the promoted one (and
/// drops what only it had), and every token is presented once more.
///
/// Asserted as for a kill in Cluster (no 503 before the cut, none for the
/// healthy shards, readiness never red, the last 503 no later than the
/// promotion + 1 s, every gate allows a fresh token of the shard without a
/// restart), and: with `replicated`, no token allowed twice; with `primary`,
/// at least one token allowed twice — the writes the cut-off primary accepted
/// before it saw itself in the minority, lost with the promotion — counted
/// and printed. About 13 s a case on 2 cores.
extension FailoverTests {
    static let partitionSetups = chosen([.clusterCut])

    /// Fresh media tokens a second, across the four workers.
    static let partitionRate = 100

    @Test(
        .enabled(
            if: NetworkNamespaces.usable || Integration.required,
            "needs root, ip (Debian: iproute2) and iptables (Debian: iptables)"
        ),
        arguments: partitionSetups
    )
    func aPrimaryCutOffFromItsReplicasAndTheOtherNodes(_ setup: Setup) async throws {
        let started = Date()
        let topology = try await offloaded { try PartitionedClusterTopology() }
        defer { topology.remove() }
        let gates = try await topology.network.inHub {
            try (0..<4).map { _ in
                try GateProcess(
                    [
                        "--replay", topology.url, "--replay-durability", setup.durability,
                        "--replay-timeout", String(Self.replayTimeoutMilliseconds),
                    ],
                    in: topology.network
                )
            }
        }
        defer { gates.forEach { $0.stop() } }
        for repetition in 1...Self.repetitions {
            let refusalsBefore = Self.unavailableReasons(gates)
            let run = try await topology.network.inHub {
                try Self.failOver(topology, gates: gates, rate: Self.partitionRate, replayAfter: .seconds(3))
            }
            let measured = FailoverMeasurement(run, onVictim: topology.wasOnVictim)
            let timeout = Double(PartitionedClusterTopology.nodeTimeoutMilliseconds)
            // The last token the cut-off primary accepted that the promotion lost: when its first allow was sent.
            let lastLostAllow = measured.doubleAllows.compactMap { index in
                run.tokens[index].presentations.first { $0.answer == FailoverStream.allowed }.map { $0.sentAt - run.killedAt }
            }.max()
            let reasons = Self.unavailableReasons(gates).map { ($0.key, $0.value - (refusalsBefore[$0.key] ?? 0)) }
                .filter { $0.1 > 0 }.sorted { $0.0 < $1.0 }.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
            let summary =
                measured.summary + "; cluster-node-timeout \(Int(timeout)) ms: promotion "
                + String(format: "%.1f", run.detection / timeout) + "x, 503 window " + String(format: "%.1f", measured.lastUnavailable / timeout)
                + "x; lost allows sent until " + (lastLostAllow.map { "\(Int($0)) ms" } ?? "-") + " after the cut; 503 reasons: " + reasons
            print("failover \(setup.name) repetition \(repetition)/\(Self.repetitions): \(summary)")
            let context = "\(setup.name) repetition \(repetition): \(summary)\n\(topology.describe())"

            #expect(
                measured.otherAnswers.isEmpty,
                "answers other than allowed, replayed or REPLAY_CHECK_UNAVAILABLE: \(measured.otherAnswers.prefix(5)); \(context)"
            )
            #expect(measured.unavailableBeforeKill == 0, "503s before the cut; \(context)")
            #expect(measured.unavailableAfterKill > 0, "no 503 at all: the stream did not reach the cut-off primary; \(context)")
            #expect(
                measured.lastUnavailable <= run.detection + 1000,
                "the last 503 was sent \(Int(measured.lastUnavailable)) ms after the cut, the promotion took \(Int(run.detection)) ms; \(context)"
            )
            #expect(measured.recovery != nil, "a gate never allowed a token of the cut-off shard after the last 503; \(context)")
            #expect(
                run.freshTokensAllowed.allSatisfy { $0 },
                "gates that refused a fresh token after the window: \(run.freshTokensAllowed); \(context)\n\(run.gateLogs.joined(separator: "\n"))"
            )
            #expect(measured.checkUnanswered == 0, "third presentations not answered allowed or replayed after the partition healed; \(context)")
            #expect(
                measured.readinessRedBeforeKill == 0 && measured.readinessRedAfterKill == 0,
                "readiness red with two of three shards healthy; \(context)"
            )
            #expect(measured.unavailableOnHealthyShards == 0, "503s for tokens of healthy shards; \(context)")
            #expect(measured.victimShardTokens > 0 && measured.healthyShardTokens > 0, "tokens on both kinds of shard; \(context)")
            if setup.durability == "replicated" {
                #expect(measured.doubleAllows.isEmpty, "tokens allowed twice: \(measured.doubleAllows.prefix(5)); \(context)")
            } else {
                // The loss docs/REDIS.md reports: if none shows, the cut came too late or the count is broken.
                #expect(!measured.doubleAllows.isEmpty, "no token allowed twice with primary durability; \(context)")
            }
        }
        print("failover \(setup.name): \(Self.repetitions) repetition(s) in \(Int(Date().timeIntervalSince(started))) s")
    }

    /// How many REPLAY_CHECK_UNAVAILABLE refusals the gates logged so far, by
    /// cause: NOREPLICAS (`min-replicas-to-write`), CLUSTERDOWN (the cut-off
    /// primary once it sees itself in the minority), "no primary known" (the
    /// nodes mark it failed before a replica is promoted), or "other" (a
    /// timeout, a `WAIT` not acknowledged, a closed connection).
    static func unavailableReasons(_ gates: [GateProcess]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for gate in gates {
            for line in gate.log.split(separator: "\n") where line.contains("REPLAY_CHECK_UNAVAILABLE") {
                let reason =
                    line.contains("NOREPLICAS")
                    ? "NOREPLICAS"
                    : line.contains("CLUSTERDOWN")
                        ? "CLUSTERDOWN"
                        : line.contains("no primary serves slot") ? "no primary known" : "other"
                counts[reason, default: 0] += 1
            }
        }
        return counts
    }
}
