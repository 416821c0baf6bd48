import Foundation
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Caddy's `forward_auth` in front of tokengate, with the shipped
/// `deploy/caddy/Caddyfile` (addresses substituted) and a second Caddy site as
/// the origin, echoing the `X-Token-*` values `copy_headers` gave it.
@Suite(
    .serialized,
    .enabled(
        if: Caddy.available,
        "caddy is not installed (apt-get install caddy); TOKENINSPECT_INTEGRATION=require makes this a failure"
    )
)
struct CaddyIntegrationTests {
    @Test func forwardAuthAllowsRefusesAndPassesTheValues() async throws {
        let clock = GateFixtures.Clock()
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A profile that binds the viewer's address: the player routes through Caddy must give the address Caddy saw.
        try Data("52a152a152a152a152a152a152a152a1\n".utf8).write(to: directory.appendingPathComponent("akamai.key"))
        let profile = directory.appendingPathComponent("akamai.profile")
        try Data(
            """
            name = akamai-bound
            kind = akamai
            key = \(directory.path)/akamai.key
            resource = TNT https://akamai.media.test/hls/tnt/master.m3u8
            bind-ip = true
            """.utf8
        ).write(to: profile)
        let gate = try GateFixtures.runtime(
            ["--cdn-profile", profile.path, "--session-secret", GateFixtures.sessionSecret(in: directory)],
            clock: clock
        )
        try await gate.application(port: 0).test(.live) { client in
            let port = try RawHTTP.freePort()
            let origin = try RawHTTP.freePort()
            let shipped = try String(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/caddy/Caddyfile"), encoding: .utf8)
            let site =
                shipped
                .replacingOccurrences(of: "media.example.com {", with: "http://127.0.0.1:\(port) {")
                .replacingOccurrences(of: "forward_auth 127.0.0.1:8089", with: "forward_auth 127.0.0.1:\(client.port!)")
                .replacingOccurrences(of: "reverse_proxy 127.0.0.1:8080", with: "reverse_proxy 127.0.0.1:\(origin)")
                .replacingOccurrences(of: "reverse_proxy 127.0.0.1:8089", with: "reverse_proxy 127.0.0.1:\(client.port!)")
            #expect(site != shipped)
            let caddyfile = """
                {
                    admin off
                    auto_https off
                    storage file_system {{prefix}}/data
                }
                \(site)
                http://127.0.0.1:\(origin) {
                    header X-Seen-Token-Kind {http.request.header.X-Token-Kind}
                    header X-Seen-Token-Resource {http.request.header.X-Token-Resource}
                    header X-Seen-Token-Mvpd {http.request.header.X-Token-Mvpd}
                    respond "segment" 200
                }
                """
            let caddy = try await offloaded { try Caddy(caddyfile: caddyfile, port: port) }
            defer { caddy.stop() }

            let token = GateFixtures.token()
            let allowed = try await RawHTTP.fetch(port: port, "/hls/tnt/seg1.ts?token=\(token)")
            #expect(allowed.status == 200)
            #expect(allowed.body == "segment")
            #expect(allowed["X-Seen-Token-Kind"] == "media")
            #expect(allowed["X-Seen-Token-Resource"] == "TNT")
            #expect(allowed["X-Seen-Token-Mvpd"] == "Comcast_SSO")
            let replayed = try await RawHTTP.fetch(port: port, "/hls/tnt/seg1.ts?token=\(token)")
            #expect(replayed.status == 403)
            #expect(replayed["X-Token-Status"] == "TOKEN_REPLAYED")
            let none = try await RawHTTP.fetch(port: port, "/hls/tnt/seg1.ts")
            #expect(none.status == 401)
            #expect(none["X-Token-Status"] == "NO_TOKEN")
            let forged = try await RawHTTP.fetch(port: port, "/hls/tnt/seg1.ts?token=\(GateFixtures.token(key: GateFixtures.untrustedKey))")
            #expect(forged.status == 403)
            #expect(forged["X-Token-Status"] == "INVALID_SIGNATURE")

            // Every spelling that leaves the folder, sent as is: Caddy does not route it (404) or the gate
            // refuses it (400 INVALID_REQUEST); the origin never serves it, and the token is not spent.
            let fresh = GateFixtures.token()
            for path in [
                "/hls/tnt/../cnn/seg1.ts", "/hls/tnt/%2e%2e/cnn/seg1.ts", "/hls/tnt/.%2E/cnn/seg1.ts", "/hls/tnt/..;/cnn/seg1.ts",
                "/hls/tnt/..%2fcnn/seg1.ts", "/hls/tnt/..%5Ccnn/seg1.ts", "/hls/tnt/./../cnn/seg1.ts",
            ] {
                let answer = try await RawHTTP.fetch(port: port, "\(path)?token=\(fresh)")
                #expect(answer.body != "segment", "\(path) reached the origin")
                #expect(
                    answer.status == 404 || (answer.status == 400 && answer["X-Token-Status"] == "INVALID_REQUEST"),
                    "\(path): \(answer.status) \(answer["X-Token-Status"] ?? "-")"
                )
            }
            let played = try await RawHTTP.fetch(port: port, "/hls/tnt/seg1.ts?token=\(fresh)")
            #expect(played.status == 200, "a refused path spent the token")

            // The player routes reach the gate, with the address Caddy saw, never the one the client wrote.
            let exchanged = try await offloaded {
                try RawHTTP.request(
                    port: port,
                    method: "POST",
                    "/v1/playback",
                    headers: [("Content-Type", "application/json"), ("X-Real-IP", "203.0.113.9")],
                    body: "{\"token\":\"\(GateFixtures.token())\"}"
                )
            }
            #expect(exchanged.status == 200, "\(exchanged.body)")
            #expect(exchanged.body.contains("ip=127.0.0.1~"), "\(exchanged.body)")
            let renewal = try await offloaded {
                try RawHTTP.request(port: port, method: "POST", "/v1/playback/renew", headers: [("Content-Type", "application/json")], body: "{}")
            }
            #expect(renewal.status == 401, "\(renewal.body)")
            #expect(renewal["X-Token-Status"] == "NO_TOKEN")
        }
    }
}
