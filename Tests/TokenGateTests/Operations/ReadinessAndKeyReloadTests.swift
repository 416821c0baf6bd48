import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import GateTestSupport
@testable import TokenGate

@Suite struct ReadinessAndKeyReloadTests {
    let clock = GateFixtures.Clock()

    @Test func healthReadinessAndMetricsAnswer() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            #expect(health.headers[.cacheControl] == "no-store")
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            #expect(String(buffer: ready.body).contains("\"ready\":true"))
            _ = try await client.authRequest("/a?token=\(GateFixtures.token())")
            _ = try await client.authRequest("/a")
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            let text = String(buffer: metrics.body)
            for name in [
                "tokengate_verdicts_total", "tokengate_request_duration_seconds", "tokengate_requests_in_flight",
                "tokengate_replay_store_operations_total", "tokengate_replay_store_duration_seconds",
                "tokengate_replay_fail_open_total", "tokengate_verdict_cache_total", "tokengate_sessions_total",
                "tokengate_keys_loaded", "tokengate_key_reloads_total",
            ] {
                #expect(text.contains("# TYPE \(name)"), "no \(name)")
            }
            #expect(text.contains(#"tokengate_verdicts_total{status="VALID_TOKEN",kind="media"} 1"#))
            #expect(text.contains(#"tokengate_verdicts_total{status="NO_TOKEN",kind="none"} 1"#))
            #expect(text.contains(#"tokengate_request_duration_seconds_count{endpoint="auth-request"} 2"#))
            #expect(text.contains("tokengate_keys_loaded 1"))
        }
    }

    @Test func readinessTurns503WhenDrainingAndSaysWhy() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            runtime.readiness.startDraining()
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(String(buffer: ready.body) == "{\"ready\":false,\"reason\":\"shutting down\"}\n")
            // Draining refuses nothing yet: in-flight and late requests are still answered.
            let late = try await client.authRequest("/a?token=\(GateFixtures.token())")
            #expect(late.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func readinessIsRedWhileTheReplayStoreDoesNotAnswer() async throws {
        let configuration = try GateFixtures.configuration()
        let runtime = try GateRuntime(
            configuration: configuration,
            logger: LogCapture().logger,
            clock: { GateFixtures.at(60_000) },
            keyPollInterval: .seconds(60),
            replay: .init(store: InMemoryReplayStore(), probe: { "connection refused" })
        )
        try await runtime.application().test(.router) { client in
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(String(buffer: ready.body).contains("replay store: connection refused"))
        }
    }

    @Test(arguments: [true, false])
    func anUnavailableReplayStoreFailsClosed(silent: Bool) async throws {
        let configuration = try GateFixtures.configuration()
        let store: any ReplayStore = silent ? SilentReplayStore() : RefusingReplayStore()
        let runtime = try GateRuntime(
            configuration: configuration,
            logger: LogCapture().logger,
            clock: { GateFixtures.at(60_000) },
            keyPollInterval: .seconds(60),
            replay: .init(store: store, probe: { nil })
        )
        try await runtime.application().test(.router) { client in
            let response = try await client.authRequest("/a?token=\(GateFixtures.token())")
            #expect(response.status == .serviceUnavailable)
            #expect(response.tokenStatus == "REPLAY_CHECK_UNAVAILABLE")
            #expect(response["X-Token-Kind"] == nil)
            // Authorization tokens never touch the store.
            let authz = try await client.authRequest("/a?token=\(GateFixtures.token(GateFixtures.request(.authorization)))")
            #expect(authz.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func failOpenAcceptsCountsAndLogs() async throws {
        let logs = LogCapture()
        let metrics = GateMetrics()
        let identity = ReplayIdentity(digest: Array(repeating: 0xAB, count: 32))
        let now = GateFixtures.at(0)
        let open = GuardedReplayStore(RefusingReplayStore(), failure: .open, events: metrics, logger: logs.logger)
        #expect(await open.accept(identity, until: now, now: now, within: .milliseconds(20)) == .accepted)
        let closed = GuardedReplayStore(
            RefusingReplayStore(),
            failure: .closed,
            events: metrics,
            logger: logs.logger
        )
        #expect(await closed.accept(identity, until: now, now: now, within: .milliseconds(20)) == .unavailable("OOM command not allowed"))
        let silent = GuardedReplayStore(
            SilentReplayStore(),
            failure: .closed,
            events: metrics,
            logger: logs.logger
        )
        // The silent store would answer `.accepted` after 10 s: `.unavailable` means the
        // caller's deadline won (no wall-clock bound: a loaded test run may delay any timer).
        guard case .unavailable = await silent.accept(identity, until: now, now: now, within: .milliseconds(20)) else {
            Issue.record("a silent store was not cut off by the timeout")
            return
        }
        let text = String(decoding: metrics.render(), as: UTF8.self)
        #expect(text.contains("tokengate_replay_fail_open_total 1"))
        #expect(text.contains(#"tokengate_replay_store_operations_total{outcome="unavailable"} 3"#))
        #expect(logs.all.contains { $0.contains("--replay-failure open") && $0.contains("token_id=abababababab") })
    }

    /// `/metrics` names every public key in use by its fingerprint and counts
    /// the shared secrets without one, and follows a reload.
    /// What GateRedisFaultTests reads to see the gate's Redis requests bounded
    /// under a fault: the client's count at each scrape, and no series
    /// without Redis (a store in the process has nothing outstanding).
    @Test func metricsCountTheRedisRequestsOutstanding() {
        let outstanding = Mutex(3)
        let metrics = GateMetrics(replayOutstanding: { outstanding.withLock { $0 } })
        let name = "tokengate_replay_store_outstanding_requests"
        #expect(String(decoding: metrics.render(), as: UTF8.self).contains("# TYPE \(name) gauge\n\(name) 3\n"))
        outstanding.withLock { $0 = 0 }
        #expect(String(decoding: metrics.render(), as: UTF8.self).contains("\n\(name) 0\n"))
        #expect(!String(decoding: GateMetrics().render(), as: UTF8.self).contains(name))
    }

    @Test func metricsNameTheKeysInUseAndCountTheSecrets() throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: keys.appendingPathComponent("a.pem").path)
        let runtime = try GateFixtures.runtime(
            [
                "--session-secret", GateFixtures.sessionSecret(in: directory),
                "--cat-key", "\(CATGateFixtures.hmacPath) edge-1", "--cat-key", "\(CATGateFixtures.es256Path) edge-es",
            ],
            base: ["--key", keys.path, "--requestor", "TNT", "--resource", "TNT"],
            clock: clock
        )
        let trusted = try #require(
            try PublicKey.keys(
                from: [UInt8](FileManager.default.contents(atPath: GateFixtures.publicKey)!),
                source: "a.pem"
            ).first
        ).sha256Fingerprint
        let es256 = CATGateFixtures.es256Key().fingerprint
        let hmacDigest = CATGateFixtures.hmacKey().fingerprint
        var metrics = ScrapedMetrics(runtime)
        #expect(metrics[#"tokengate_key_info{set="trusted",fingerprint="\#(trusted)"}"#] == 1)
        #expect(metrics[#"tokengate_key_info{set="cat",fingerprint="\#(es256)"}"#] == 1)
        #expect(metrics[#"tokengate_secrets_loaded{set="cat"}"#] == 1)
        #expect(metrics[#"tokengate_secrets_loaded{set="session"}"#] == 1)
        #expect(!metrics.text.contains(hmacDigest), "a shared secret's digest reached /metrics")
        #expect(metrics.sum(prefix: "tokengate_key_info{") == 2)

        let other = try SigningKey(bytes: [UInt8](FileManager.default.contents(atPath: GateFixtures.untrustedKeyPath)!), source: "u")
        try Data(other.publicKey.derRepresentation).write(to: keys.appendingPathComponent("b.der"))
        #expect(runtime.reloader.reload(because: "test"))
        metrics = ScrapedMetrics(runtime)
        #expect(metrics[#"tokengate_key_info{set="trusted",fingerprint="\#(other.publicKey.sha256Fingerprint)"}"#] == 1)
        #expect(metrics.sum(prefix: #"tokengate_key_info{set="trusted""#) == 2)
    }

    @Test func keysReloadAndAFailedReloadKeepsTheOldKeys() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("issuer.pem")
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: keyFile.path)
        let logs = LogCapture()
        let runtime = try GateFixtures.runtime(
            base: ["--key", keyFile.path, "--requestor", "TNT", "--resource", "TNT"],
            clock: clock,
            logs: logs
        )
        let authz = GateFixtures.token(GateFixtures.request(.authorization))
        try await runtime.application().test(.router) { client in
            let r1 = try await client.authRequest("/a?token=\(authz)")
            #expect(r1.tokenStatus == "VALID_TOKEN")
            #expect(runtime.cache.count == 1)

            // A broken key file: the old key stays, the failure is counted and logged.
            try Data("not a key".utf8).write(to: keyFile)
            #expect(runtime.reloadKeys() == false)
            let r2 = try await client.authRequest("/a?token=\(GateFixtures.token())")
            #expect(r2.tokenStatus == "VALID_TOKEN")
            #expect(ScrapedMetrics(runtime)[#"tokengate_key_reloads_total{result="failure"}"#] == 1)
            #expect(logs.all.contains { $0.contains("key reload failed") && $0.contains("issuer.pem") })

            // The untrusted issuer's public key replaces ours: our tokens stop verifying, the cache is emptied.
            let untrusted = try SigningKey(
                bytes: [UInt8](FileManager.default.contents(atPath: GateFixtures.untrustedKeyPath)!),
                source: "u"
            )
            try Data(untrusted.publicKey.derRepresentation).write(to: keyFile)
            runtime.reloader.reloadIfChanged()
            #expect(ScrapedMetrics(runtime)[#"tokengate_key_reloads_total{result="success"}"#] == 1)
            #expect(runtime.cache.count == 0)
            let r3 = try await client.authRequest("/a?token=\(authz)")
            #expect(r3.tokenStatus == "INVALID_SIGNATURE")
            let r4 = try await client.authRequest("/a?token=\(GateFixtures.token(key: GateFixtures.untrustedKey))")
            #expect(r4.tokenStatus == "VALID_TOKEN")
            // Nothing changed since: no reload.
            runtime.reloader.reloadIfChanged()
            #expect(ScrapedMetrics(runtime)[#"tokengate_key_reloads_total{result="success"}"#] == 1)
        }
    }

    /// The gate says what it skipped in a key folder, at start and on every reload: one line per file, a
    /// private key loudly, and `tokengate_key_files_skipped`; a skipped file is no failed reload (docs/DEPLOY.md).
    @Test func theGateSaysWhatItSkippedInAKeyFolder() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: directory.appendingPathComponent("issuer.pem").path)
        try Data("the issuer's keys\n".utf8).write(to: directory.appendingPathComponent("README"))
        try Data("{\"kty\":\"oct\",\"k\":\"AAAA\"}".utf8).write(to: directory.appendingPathComponent("key.jwk"))
        try FileManager.default.copyItem(atPath: GateFixtures.untrustedKeyPath, toPath: directory.appendingPathComponent("private.pem").path)
        let logs = LogCapture()
        let runtime = try GateFixtures.runtime(
            base: ["--key", directory.path, "--requestor", "TNT", "--resource", "TNT"],
            clock: clock,
            logs: logs
        )
        func expectEachSkipSaid(times: Int) {
            for name in ["README", "key.jwk"] {
                #expect(logs.all.count { $0.contains("key folder: file skipped") && $0.contains("/\(name)") } == times, "\(name): \(logs.all)")
            }
            #expect(logs.all.count { $0.contains("private key in the trust folder: skipped, move it out") && $0.contains("/private.pem") } == times)
            #expect(ScrapedMetrics(runtime)["tokengate_key_files_skipped"] == 3)
        }
        expectEachSkipSaid(times: 1)
        #expect(runtime.reloadKeys())
        expectEachSkipSaid(times: 2)
        #expect(ScrapedMetrics(runtime)[#"tokengate_key_reloads_total{result="success"}"#] == 1)
        // Moved out: the gauge says so.
        try FileManager.default.removeItem(at: directory.appendingPathComponent("private.pem"))
        #expect(runtime.reloadKeys())
        #expect(ScrapedMetrics(runtime)["tokengate_key_files_skipped"] == 2)
    }

    @Test func keysReloadWhileRequestsAreInFlightWithoutAFailedRequest() async throws {
        let runtime = try GateFixtures.runtime(["--verdict-cache-size", "0"], clock: clock)
        let tokens = (0..<200).map { _ in GateFixtures.token(GateFixtures.request(.authorization)) }
        try await runtime.application().test(.router) { client in
            try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    for _ in 0..<20 {
                        #expect(runtime.reloadKeys())
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    return nil
                }
                for token in tokens {
                    group.addTask { try await client.authRequest("/a?token=\(token)").tokenStatus }
                }
                var answered = 0
                for try await status in group {
                    guard let status else { continue }
                    #expect(status == "VALID_TOKEN")
                    answered += 1
                }
                #expect(answered == tokens.count)
            }
        }
        #expect(ScrapedMetrics(runtime)[#"tokengate_key_reloads_total{result="success"}"#] == 20)
    }
}
