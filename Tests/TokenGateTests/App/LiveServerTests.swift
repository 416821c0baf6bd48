import EntitlementTokens
import Foundation
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The gate's service group over a real socket, in process: limits and
/// graceful shutdown. The `tokengate` executable itself (config file, SIGHUP,
/// SIGTERM) is ``ExecutableTests``, in TokenGateIntegrationTests.
@Suite(.serialized) struct LiveServerTests {
    /// Runs the gate's service group on a free port until `body` returns, then shuts it down gracefully.
    func withServer(
        _ extra: [String] = ["--shutdown-grace", "0.5"],
        _ body: @Sendable (Int, GateRuntime, ServiceGroup) async throws -> Void
    ) async throws {
        let runtime = try GateFixtures.runtime(extra)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = runtime.serviceGroup(port: 0) { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body(port, runtime, group)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func oversizedHeadersAreRefusedWithoutStallingOtherRequests() async throws {
        try await withServer { port, _, _ in
            let huge = String(repeating: "a", count: ServerLimits.maximumHeaderFieldBytes + 1024)
            // The server cuts such a request off before any handler runs: no answer of the gate's.
            let refused = try? await RawHTTP.fetch(port: port, "/v1/auth-request", headers: [("X-Original-URI", "/a?token=\(huge)")])
            #expect(refused?.tokenStatus == nil, "an oversized header reached the gate: \(refused?.status ?? 0)")
            let many = (0..<(ServerLimits.maximumHeaderFields + 10)).map { ("X-Filler-\($0)", "x") }
            let tooMany = try? await RawHTTP.fetch(port: port, "/healthz", headers: many)
            #expect(tooMany == nil || tooMany!.status >= 400, "status \(tooMany?.status ?? 0)")
            let fine = try await RawHTTP.fetch(
                port: port,
                "/v1/auth-request",
                headers: [("X-Original-URI", "/a?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")]
            )
            #expect(fine.status == 200)
            #expect(fine["X-Token-Status"] == "VALID_TOKEN")
        }
    }

    @Test func gracefulShutdownTurnsReadinessRedFirst() async throws {
        // A grace long enough that a loaded machine still reaches the last request inside it:
        // under the whole suite, the drain service has taken more than two seconds to wake.
        try await withServer(["--shutdown-grace", "10"]) { port, _, group in
            let before = try await RawHTTP.fetch(port: port, "/readyz")
            #expect(before.status == 200)
            await group.triggerGracefulShutdown()
            // The drain service wakes on the group's signal as a task of its own: on a loaded
            // machine that can take longer than any fixed pause, so poll inside the grace.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(8))
            var draining = try await RawHTTP.fetch(port: port, "/readyz")
            while draining.status == 200, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                draining = try await RawHTTP.fetch(port: port, "/readyz")
            }
            #expect(draining.status == 503)
            #expect(draining.body.contains("shutting down"))
            // Still served while draining.
            let served = try await RawHTTP.fetch(
                port: port,
                "/v1/auth-request",
                headers: [("X-Original-URI", "/a?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")]
            )
            #expect(served["X-Token-Status"] == "VALID_TOKEN")
        }
    }
}
