import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Issue 20 item 8a: "now" is read by the library's one function
/// (`TokenDateParser.parseNow`) on `/v1/verify` and the debugger's report, as
/// by the CLI's `--now`: the same instant written as ISO 8601, epoch seconds
/// or epoch milliseconds gives the same verdicts everywhere.
@Suite struct NowParameterTests {
    let clock = GateFixtures.Clock()

    /// The fixtures' media token lives from 22:01:31 to 22:08:31 (7 minutes).
    static let inside = ["2016-03-17T22:05:31Z", "1458252331", "1458252331000"]
    static let after = ["2016-03-17T22:20:00Z", "1458253200", "1458253200000"]

    func status(_ client: any TestClientProtocol, _ uri: String, _ token: String) async throws -> (HTTPResponse.Status, String?) {
        let response = try await client.executeRequest(uri: uri, method: .post, headers: [:], body: ByteBuffer(string: token))
        let json = try? JSONSerialization.jsonObject(with: Data(buffer: response.body))
        let reports = (json as? [[String: Any]]) ?? ((json as? [String: Any])?["reports"] as? [[String: Any]]) ?? []
        return (response.status, reports.first?["status"] as? String)
    }

    @Test(arguments: ["/v1/verify", "/debugger/report"])
    func everyWayOfWritingNowGivesTheSameVerdict(route: String) async throws {
        let runtime = try GateFixtures.runtime(["--debugger"], clock: clock)
        let token = GateFixtures.token()
        try await runtime.application().test(.router) { client in
            for now in Self.inside {
                let (code, status) = try await status(client, "\(route)?now=\(now)", token)
                #expect(code == .ok, "\(route)?now=\(now)")
                #expect(status == "VALID_TOKEN", "\(route)?now=\(now)")
            }
            for now in Self.after {
                let (code, status) = try await status(client, "\(route)?now=\(now)&leeway=0", token)
                #expect(code == .ok, "\(route)?now=\(now)")
                #expect(status == "TOKEN_EXPIRED", "\(route)?now=\(now)")
            }
            let (beyond, _) = try await status(client, "\(route)?now=9999999999999999", token)
            #expect(beyond == .badRequest)
        }
    }

    @Test func theStandaloneDebuggerReadsNowTheSameWay() async throws {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        let server = try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
        let token = GateFixtures.token()
        try await server.application().test(.router) { client in
            for now in Self.inside {
                let (_, verdict) = try await status(client, "/debugger/report?now=\(now)", token)
                #expect(verdict == "VALID_TOKEN", "\(now)")
            }
            for now in Self.after {
                let (_, verdict) = try await status(client, "/debugger/report?now=\(now)&leeway=0", token)
                #expect(verdict == "TOKEN_EXPIRED", "\(now)")
            }
        }
    }
}
