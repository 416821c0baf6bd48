import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

/// A draining gate (docs/DESIGN.md#operators), the built executable stopped
/// as systemd or Kubernetes stops it: on SIGTERM `/readyz` turns 503 and the
/// gate keeps answering for `--shutdown-grace`, each answer saying
/// `Connection: close` and closing its connection, so a proxy's kept-alive
/// connection carries at most one more request and the proxy knows it is
/// gone; then the listener closes, an idle connection is closed in order
/// (never reset), and the process exits 0.
@Suite(.serialized, .enabled(if: GateProcess.binary != nil || Integration.required, "the tokengate executable is not built"))
struct DrainTests {
    static let grace = 3.0

    /// One request on a connection during the drain: the answer, its
    /// `Connection` field, and how the connection ended (``KeepAliveHTTP/peerEnd(within:)``).
    struct Exchange: Sendable {
        var answer: String
        var connection: String?
        var end: String?

        init(_ client: KeepAliveHTTP, _ target: String, headers: [(String, String)] = []) throws {
            let answer = try client.get(target, headers: headers)
            self.answer = "\(answer.status) \(answer.tokenStatus ?? "-")"
            connection = client.lastHeader("Connection")
            end = client.peerEnd(within: 1)
        }
    }

    /// What clients of the draining gate saw, in order.
    struct Seen: Sendable {
        var keptAliveBefore: String?
        var readinessAfter: (held: Bool, after: Double)
        var busy: Exchange
        var late: Exchange
        var stepsTook: Double
        var idleEnd: String?
        var idleClosedAfter: Double
        var exitStatus: Int32?
        var drain: Double
        var log: String
    }

    @Test func aDrainingGateAnswersEachRequestAndClosesItsConnectionAfterTheAnswer() async throws {
        let seen = try await offloaded {
            let gate = try GateProcess(["--shutdown-grace", String(Self.grace)])
            defer { gate.stop() }
            let busy = KeepAliveHTTP(port: gate.port)
            let idle = KeepAliveHTTP(port: gate.port)
            _ = try busy.get("/healthz")
            let keptAlive = busy.lastHeader("Connection")
            _ = try idle.get("/healthz")

            let sigterm = Date()
            gate.process.terminate()
            let readiness = eventually(within: 1) { try RawHTTP.get(port: gate.port, "/readyz").status == 503 }
            // The kept-alive connection carries one more request.
            let token = try FleetLoad.mediaTokenForms()[2]
            let busyExchange = try Exchange(busy, "/v1/auth-request", headers: [("X-Original-URI", "/hls/tnt/seg1.ts?token=\(token)")])
            // A new connection is still accepted and answered, once.
            let lateExchange = try Exchange(KeepAliveHTTP(port: gate.port), "/healthz")
            let stepsTook = Date().timeIntervalSince(sigterm)
            // The idle connection, untouched since before SIGTERM.
            let idleEnd = idle.peerEnd(within: Self.grace + 5)
            let idleClosedAfter = Date().timeIntervalSince(sigterm)
            let status = gate.waitForExit(seconds: 10)
            return Seen(
                keptAliveBefore: keptAlive,
                readinessAfter: readiness,
                busy: busyExchange,
                late: lateExchange,
                stepsTook: stepsTook,
                idleEnd: idleEnd,
                idleClosedAfter: idleClosedAfter,
                exitStatus: status,
                drain: Date().timeIntervalSince(sigterm),
                log: gate.log
            )
        }
        print(String(format: "drain: SIGTERM to exit %.2f s with --shutdown-grace %.0f", seen.drain, Self.grace))
        #expect(seen.keptAliveBefore == nil, "a connection was not kept alive before SIGTERM")
        #expect(seen.readinessAfter.held, "readiness still 200 \(seen.readinessAfter.after) s after SIGTERM")
        #expect(seen.busy.answer == "200 VALID_TOKEN")
        #expect(seen.busy.connection == "close")
        #expect(seen.busy.end == "closed", "the connection stayed open after its answer during the drain")
        #expect(seen.late.answer == "200 -")
        #expect(seen.late.connection == "close")
        #expect(seen.late.end == "closed", "a connection opened during the drain stayed open after its answer")
        #expect(seen.stepsTook < Self.grace, "the steps above outlasted the grace period (\(seen.stepsTook) s); they prove nothing")
        // An idle connection is closed in order when the grace period ends, before the exit.
        #expect(seen.idleEnd == "closed")
        #expect(seen.idleClosedAfter >= Self.grace - 0.1, "an idle connection closed \(seen.idleClosedAfter) s after SIGTERM")
        #expect(seen.exitStatus == 0, "\(seen.log.suffix(1500))")
        #expect(seen.drain >= Self.grace && seen.drain < Self.grace + 3)
    }
}
