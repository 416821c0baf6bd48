import EntitlementTokens
import Foundation
import HummingbirdTesting
import Synchronization
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// docs/DESIGN.md#revocation-is-exact: a key reload that removes a key ends every
/// allow that rests on it, including one whose verification began before the
/// reload and ended after the cache was flushed.
@Suite struct RevocationTests {
    /// A key directory whose RSA key (the one the fixtures sign with) can be
    /// removed and put back; a P-256 key stays, so the ring is never empty.
    struct KeyFolder: Sendable {
        let directory: URL
        var rsa: URL { directory.appendingPathComponent("issuer-rsa.pem") }

        init() throws {
            directory = GateFixtures.temporaryDirectory()
            try FileManager.default.copyItem(
                atPath: GateFixtures.keys.appendingPathComponent("trusted/test-p256.pub.pem").path,
                toPath: directory.appendingPathComponent("other-p256.pem").path
            )
            try trustRSA(true)
        }

        func trustRSA(_ trust: Bool) throws {
            let present = FileManager.default.fileExists(atPath: rsa.path)
            if trust, !present { try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: rsa.path) }
            if !trust, present { try FileManager.default.removeItem(at: rsa) }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Holds the first request that reaches it until released.
    final class Latch: Sendable {
        private struct State {
            var armed = true
            var held: CheckedContinuation<Void, Never>?
            var heldSignal: CheckedContinuation<Void, Never>?
            var isHeld = false
        }
        private let state = Mutex(State())

        func hold() async {
            let mine = state.withLock { state -> Bool in
                guard state.armed else { return false }
                state.armed = false
                return true
            }
            guard mine else { return }
            await withCheckedContinuation { continuation in
                let signal = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.held = continuation
                    state.isHeld = true
                    defer { state.heldSignal = nil }
                    return state.heldSignal
                }
                signal?.resume()
            }
        }

        func waitUntilHeld() async {
            await withCheckedContinuation { continuation in
                let already = state.withLock { state -> Bool in
                    if state.isHeld { return true }
                    state.heldSignal = continuation
                    return false
                }
                if already { continuation.resume() }
            }
        }

        func release() {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.held = nil }
                return state.held
            }?.resume()
        }
    }

    func runtime(keys: KeyFolder, clock: GateFixtures.Clock, hooks: AuthGate.Hooks = .init()) throws -> GateRuntime {
        try GateRuntime(
            configuration: GateFixtures.configuration(["--key", keys.directory.path], base: ["--requestor", "TNT", "--resource", "TNT"]),
            logger: LogCapture().logger,
            clock: { clock.read() },
            keyPollInterval: .seconds(3600),
            replay: .init(store: InMemoryReplayStore()),
            hooks: hooks
        )
    }

    /// The race made deterministic: a verification is held between its
    /// verdict and the cache insert while a reload removes its key.
    @Test func anAllowVerifiedWithARemovedKeyNeverEntersTheCache() async throws {
        let keys = try KeyFolder()
        defer { keys.remove() }
        let clock = GateFixtures.Clock()
        let latch = Latch()
        let gate = try runtime(keys: keys, clock: clock, hooks: .init(beforeCacheInsert: { await latch.hold() }))
        let token = GateFixtures.token(GateFixtures.request(.authorization))
        try await gate.application().test(.router) { client in
            async let first = client.authRequest("/a?token=\(token)", resource: nil)
            await latch.waitUntilHeld()
            try keys.trustRSA(false)
            #expect(gate.reloadKeys())
            latch.release()
            // It began before the reload: its own answer may allow.
            #expect(try await first.tokenStatus == "VALID_TOKEN")
            let after = try await client.authRequest("/a?token=\(token)", resource: nil)
            #expect(after.tokenStatus == "INVALID_SIGNATURE", "a verdict made with the removed key was served from the cache")
            let metrics = String(decoding: gate.metrics.render(), as: UTF8.self)
            #expect(metrics.contains(#"tokengate_verdict_cache_total{result="stale"} 1"#))
        }
    }

    /// Reload cycles under concurrent load; the oracle fails on any allow of
    /// a request that began after a reload removed the key and ended before
    /// the key came back.
    @Test func noStaleAllowUnderReloadCyclesAndConcurrentLoad() async throws {
        let keys = try KeyFolder()
        defer { keys.remove() }
        let clock = GateFixtures.Clock()
        let gate = try runtime(keys: keys, clock: clock)
        let tokens = (0..<4).map { _ in GateFixtures.token(GateFixtures.request(.authorization)) }
        final class Tally: Sendable {
            /// (epoch, whether the RSA key is trusted), published after each reload returned.
            let phase = Mutex((epoch: 0, trustsRSA: true))
            let done = Atomic<Bool>(false)
            let staleAllows = Atomic<Int>(0)
            let checked = Atomic<Int>(0)
        }
        let tally = Tally()
        try await gate.application().test(.router) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Cycles until the oracle has judged enough requests. A phase
                    // without the key lasts until a few requests were judged in
                    // it (or 1 s): on a machine busy with other suites a fixed
                    // 10 ms phase can pass with no request judged at all.
                    let start = ContinuousClock.now
                    var cycle = 0
                    while tally.checked.load(ordering: .relaxed) < 200, ContinuousClock.now - start < .seconds(120) {
                        cycle += 1
                        let trust = cycle % 2 == 1
                        // While a reload runs, either ring may answer: a
                        // request that overlaps it is not judged (its epoch changes).
                        tally.phase.withLock { $0 = ($0.epoch + 1, true) }
                        try keys.trustRSA(trust)
                        #expect(gate.reloadKeys())
                        tally.phase.withLock { $0 = ($0.epoch + 1, trust) }
                        if trust {
                            try await Task.sleep(for: .milliseconds(2))
                        } else {
                            let judged = tally.checked.load(ordering: .relaxed)
                            let phaseStart = ContinuousClock.now
                            repeat {
                                try await Task.sleep(for: .milliseconds(10))
                            } while tally.checked.load(ordering: .relaxed) < judged + 8 && ContinuousClock.now - phaseStart < .seconds(1)
                        }
                    }
                    tally.done.store(true, ordering: .sequentiallyConsistent)
                }
                for worker in 0..<8 {
                    group.addTask {
                        var index = worker
                        while !tally.done.load(ordering: .sequentiallyConsistent) {
                            let before = tally.phase.withLock { $0 }
                            let answer = try await client.authRequest("/a?token=\(tokens[index % tokens.count])", resource: nil)
                            let after = tally.phase.withLock { $0.epoch }
                            if before.epoch == after, !before.trustsRSA {
                                tally.checked.add(1, ordering: .relaxed)
                                if answer.tokenStatus == "VALID_TOKEN" { tally.staleAllows.add(1, ordering: .relaxed) }
                            }
                            index += 1
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(tally.staleAllows.load(ordering: .relaxed) == 0)
        #expect(tally.checked.load(ordering: .relaxed) >= 200, "the oracle checked too few requests to mean anything")
    }
}
