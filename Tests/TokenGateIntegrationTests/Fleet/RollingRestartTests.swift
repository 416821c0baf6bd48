import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

/// Rolling a fleet (docs/DEPLOY.md#rolling-a-fleet): two `tokengate serve`
/// processes on one real redis-server behind the shipped nginx site (a
/// `server` line each in its `upstream tokengate`), players arriving at a
/// steady rate (``SteadyPlayers``), and each gate restarted in turn as the
/// guide says: SIGTERM, wait for the exit, start it again on its port, wait
/// for `/readyz` 200, then the next. No player may see anything but the
/// expected answer, and no media token may be allowed twice.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available,
        "nginx is not installed (apt-get install nginx-light); TOKENINSPECT_INTEGRATION=require makes this a failure"
    ),
    .enabled(if: Integration.redis, "redis-server not installed"),
    .enabled(if: GateProcess.binary != nil || Integration.required, "the tokengate executable is not built"),
    .holdsMachineLock
)
struct RollingRestartTests {
    static let playersPerSecond = 20.0
    /// The gate's default `--shutdown-grace`: readiness 503 this long before the listener closes.
    static let grace = 2.0
    /// How long the load runs before the first restart.
    static let settle = 1.5
    /// How long a gate stays stopped between its exit and its start.
    static let stopped = 0.5

    static let files = [
        "hls/tnt/master.m3u8": "#EXTM3U\n#EXT-X-VERSION:3\nseg1.ts\n",
        "hls/tnt/seg1.ts": "segment one",
    ]

    /// One restart as the guide's steps, timed from the load's start.
    struct Restart: CustomStringConvertible {
        var port: Int
        var sigterm: Double
        var exited: Double
        var ready: Double
        var exitStatus: Int32?
        var drain: Double { exited - sigterm }
        var description: String {
            String(
                format: "gate %d: SIGTERM at %.2f s, exit %@ after %.2f s (the drain), /readyz 200 again at %.2f s",
                port,
                sigterm,
                exitStatus.map { "\($0)" } ?? "none",
                drain,
                ready
            )
        }
    }

    @Test func restartingEachGateInTurnFailsNoPlayerAndAllowsNoTokenTwice() async throws {
        try await withRedisServer { redis in
            let directory = GateFixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let secret = GateFixtures.sessionSecret(in: directory)
            // GateProcess starts every gate with --shutdown-grace 0; the last value given counts.
            let arguments = [
                "--replay", redis.url, "--session-secret", secret, "--session-lifetime", "600",
                "--shutdown-grace", String(Self.grace),
            ]
            var gates = try await offloaded { try (0..<2).map { _ in try GateProcess(arguments) } }
            defer { gates.forEach { $0.stop() } }
            for gate in gates { try await Self.waitUntilReady(gate) }

            let port = try RawHTTP.freePort()
            let originPort = try RawHTTP.freePort()
            // The site as shipped, a server line per gate; only the read timeout is longer (a
            // machine shared with other builds can stall a gate past 2 s, which is not this test's subject).
            let site = try ShippedNginxSite(
                gate: gates[0].port,
                moreGates: [gates[1].port],
                origin: originPort,
                port: port,
                gateReadTimeout: "10s"
            )
            let origin = "\nserver {\n    listen 127.0.0.1:\(originPort);\n    root {{prefix}}/www;\n}\n"
            let nginx = try await offloaded { try Nginx(http: site.http + origin, port: port, files: Self.files, configFiles: site.snippets) }
            defer { nginx.stop() }

            // Enough fresh tokens for a minute of players; the timeline below takes far less.
            let tokens = try await offloaded { try FleetLoad.mintMediaTokens(Int(Self.playersPerSecond * 60)).map { $0[2] } }
            let load = SteadyPlayers(port: port, tokens: tokens, playersPerSecond: Self.playersPerSecond)
            var restarts: [Restart] = []
            var logs: [String] = []
            do {
                try await Task.sleep(for: .seconds(Self.settle))
                for index in gates.indices {
                    let old = gates[index]
                    let sigterm = load.elapsed
                    old.process.terminate()
                    let status = try await offloaded { old.waitForExit(seconds: 30) }
                    let exited = load.elapsed
                    logs.append(old.log)
                    old.stop()
                    // A restart is not instant (a package upgrade unpacks between stop and start):
                    // nginx meets the closed port meanwhile, which the site's retry must cover.
                    try await Task.sleep(for: .seconds(Self.stopped))
                    gates[index] = try await offloaded { try GateProcess(arguments, port: old.port) }
                    try await Self.waitUntilReady(gates[index])
                    restarts.append(Restart(port: old.port, sigterm: sigterm, exited: exited, ready: load.elapsed, exitStatus: status))
                    // nginx took the gate out of the rotation when it was refused; it asks it
                    // again once fail_timeout has passed (whole seconds, so one more).
                    try await Task.sleep(for: .seconds(site.gateFailTimeout + 1))
                }
            } catch {
                _ = load.stop()
                throw error
            }
            let tally = try await offloaded { load.stop() }

            // What nginx met and retried on the other gate (its error log names each, once).
            let errorLog = nginx.errorLog
            let refused = errorLog.components(separatedBy: "(111: Connection refused) while connecting to upstream").count - 1
            let closed =
                errorLog.components(separatedBy: "prematurely closed connection while reading response header").count - 1
                + errorLog.components(separatedBy: "(104: Connection reset by peer) while reading response header").count - 1
            print("rolling restart: \(tally)")
            print("rolling restart: nginx was refused \(refused) times and had \(closed) connections closed before an answer")
            for restart in restarts { print("rolling restart: \(restart)") }
            for line in tally.unexpected.prefix(20) { print("rolling restart: unexpected at \(line)") }
            #expect(
                tally.unexpected.isEmpty,
                """
                \(tally.unexpected.count) unexpected answers: \(tally.unexpected.prefix(20).joined(separator: "; "))
                restarts: \(restarts)
                nginx: \(nginx.errorLog.suffix(3000))
                """
            )
            #expect(tally.allowedTwice == 0, "\(tally)")
            #expect(tally["fresh 200 VALID_TOKEN"] == tally.players, "\(tally)")
            #expect(tally["replay 403 TOKEN_REPLAYED"] == tally.players, "\(tally)")
            #expect(tally["segment 200 VALID_SESSION"] == tally.players, "\(tally)")
            #expect(!load.ranOut, "the players ran out of tokens before the last restart was over")
            // The restarts reached nginx: each stopping gate refused it, or closed a connection before an
            // answer, at least once (nginx then leaves it out for fail_timeout); else the retry went untested.
            #expect(refused + closed >= restarts.count, "nginx met \(refused + closed) failures over \(restarts.count) restarts")
            #expect(tally.late == 0, "the load did not hold its rate: \(tally)")
            for (restart, log) in zip(restarts, logs) {
                #expect(restart.exitStatus == 0, "\(restart)\n\(log.suffix(2000))")
                // The drain is the grace period and the in-flight requests: a drain that
                // ends at once did not keep serving, one far past the grace hangs.
                #expect(restart.drain >= Self.grace && restart.drain < Self.grace + 5, "\(restart)")
            }
            // Both restarted gates are back in the site's rotation: each answered players after its restart.
            for gate in gates {
                let verdicts = ScrapedMetrics(port: gate.port)?.sum(prefix: "tokengate_verdicts_total") ?? 0
                #expect(verdicts > 0, "gate \(gate.port) answered no player after its restart")
            }
        }
    }

    /// The other half of the site's retry: a gate that took the request and
    /// did not answer within the read timeout may have spent the token, so
    /// nginx never asks another gate (`proxy_next_upstream error`, without
    /// `timeout`); the player gets 503 GATE_UNAVAILABLE and the token is
    /// not allowed elsewhere.
    @Test func aGateThatTookTheRequestAndFellSilentIsNeverRetriedOnAnother() async throws {
        let silent = try SilentListener()
        let gate = try await offloaded { try GateProcess([]) }
        defer { gate.stop() }
        let port = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        // As shipped, read timeout included; the silent one first in the rotation.
        let site = try ShippedNginxSite(gate: silent.port, moreGates: [gate.port], origin: originPort, port: port)
        let origin = "\nserver {\n    listen 127.0.0.1:\(originPort);\n    root {{prefix}}/www;\n}\n"
        let nginx = try await offloaded { try Nginx(http: site.http + origin, port: port, files: Self.files, configFiles: site.snippets) }
        defer { nginx.stop() }
        var answers: [String] = []
        for _ in 0..<2 {
            let token = try FleetLoad.mediaTokenForms()[2]
            let answer = try await RawHTTP.fetch(port: port, "/hls/tnt/master.m3u8?token=\(token)")
            answers.append("\(answer.status) \(answer.tokenStatus ?? "-")")
        }
        withExtendedLifetime(silent) {}
        #expect(answers.sorted() == ["200 VALID_TOKEN", "503 GATE_UNAVAILABLE"], "\(answers)\n\(nginx.errorLog.suffix(2000))")
        let verdicts = ScrapedMetrics(port: gate.port)?.sum(prefix: "tokengate_verdicts_total") ?? -1
        #expect(verdicts == 1, "the gate was asked \(verdicts) times for 2 players, one of whom the silent gate had taken")
    }

    static func waitUntilReady(_ gate: GateProcess) async throws {
        let ready = try await offloaded { eventually(within: 10) { try RawHTTP.get(port: gate.port, "/readyz").status == 200 } }
        try #require(ready.held, "gate \(gate.port) not ready:\n\(gate.log.suffix(1000))")
    }
}

extension SteadyPlayers.Tally {
    subscript(_ key: String) -> Int { answers[key] ?? 0 }
}
