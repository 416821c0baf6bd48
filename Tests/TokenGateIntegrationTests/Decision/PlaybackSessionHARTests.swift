import EntitlementTokens
import Foundation
import HARReport
import Testing

@testable import GateTestSupport

/// One owner of the session format: a session a running `tokengate serve`
/// issued (the built executable, on a real socket) is verified by `tokeninspect
/// har`'s reading of a capture with the same secret file, and refused with another.
@Suite struct PlaybackSessionHARTests {
    @Test func aSessionTheRunningGateIssuedVerifiesInTheCaptureReport() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let gate = try await offloaded { try GateProcess(["--session-secret", secret, "--session-lifetime", "600"]) }
        defer { gate.stop() }
        let token = try FleetLoad.mediaTokenForms()[2]
        let opened = try RawHTTP.get(port: gate.port, "/v1/auth-request", headers: [("X-Original-URI", "/hls/tnt/master.m3u8?token=\(token)")])
        #expect(opened.status == 200 && opened.tokenStatus == "VALID_TOKEN", "\(opened.status) \(opened.body)")
        let session = try #require(opened["X-Token-Session"])
        // The gate itself lets the session through, as the capture's second request shows.
        let followed = try RawHTTP.get(
            port: gate.port,
            "/v1/auth-request",
            headers: [("X-Original-URI", "/hls/tnt/seg1.ts"), ("Cookie", "tokengate_session=\(session)")]
        )
        #expect(followed.tokenStatus == "VALID_SESSION", "\(followed.status) \(followed.body)")

        let now = TokenTimestamp.now()
        func entry(_ url: String, request: [(String, String)], response: [(String, String)], status: Int) -> String {
            func fields(_ pairs: [(String, String)]) -> String {
                "[" + pairs.map { #"{"name":"\#($0.0)","value":"\#($0.1)"}"# }.joined(separator: ",") + "]"
            }
            return #"{"startedDateTime":"\#(now.iso8601)","request":{"method":"GET","url":"\#(url)","headers":\#(fields(request))},"#
                + #""response":{"status":\#(status),"headers":\#(fields(response))}}"#
        }
        let capture = Array(
            (#"{"log":{"version":"1.2","entries":["#
                + [
                    entry(
                        "https://site.test/hls/tnt/master.m3u8?token=\(token)",
                        request: [],
                        response: [("X-Token-Session", session), ("X-Token-Status", "VALID_TOKEN"), ("X-Token-Resource", "TNT")],
                        status: 200
                    ),
                    entry(
                        "https://site.test/hls/tnt/seg1.ts",
                        request: [("Cookie", "tokengate_session=\(session)")],
                        response: [("X-Token-Status", "VALID_SESSION")],
                        status: 200
                    ),
                ].joined(separator: ",") + "]}}").utf8
        )
        func sessionVerdicts(_ keys: HARKeys) throws -> [String] {
            var reader = HARReader()
            var analysis = HARAnalysis(keys: keys)
            try reader.feed(capture.span) { analysis.add($0) }
            try reader.finish { analysis.add($0) }
            return analysis.finish().timeline.flatMap(\.credentials).filter { $0.kind == .session }.map(\.verdict.status)
        }
        let same = try PlaybackSessionSecrets.load(paths: [secret])
        #expect(try sessionVerdicts(HARKeys(sessionSecrets: same)) == ["VALID_SESSION", "VALID_SESSION"])
        let other = try PlaybackSessionSecrets(secrets: [Array(repeating: UInt8(ascii: "x"), count: 32)])
        #expect(try sessionVerdicts(HARKeys(sessionSecrets: other)) == ["INVALID_SESSION", "INVALID_SESSION"])
        #expect(try sessionVerdicts(HARKeys()) == ["NOT_CHECKED", "NOT_CHECKED"])
    }
}
