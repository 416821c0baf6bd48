import EntitlementTokens
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Playback sessions through the auth endpoint (docs/DESIGN.md#playback-sessions).
@Suite struct SessionEndpointTests {
    let clock = GateFixtures.Clock()

    func withSessions(lifetime: Int = 600, _ body: @Sendable (any TestClientProtocol, GateRuntime) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let runtime = try GateFixtures.runtime(["--session-secret", secret, "--session-lifetime", String(lifetime)], clock: clock)
        try await runtime.application().test(.router) { client in try await body(client, runtime) }
    }

    /// The session secrets reload with the keys: sessions made with a secret
    /// that left end, new ones use the new secret, and a reload that meets a
    /// bad secret file keeps the secrets in use and says so in `/readyz`.
    @Test func sessionSecretsReloadAndAFailedReloadIsNamedInReadyz() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let runtime = try GateFixtures.runtime(["--session-secret", secret], clock: clock)
        try await runtime.application().test(.router) { client in
            func open() async throws -> String {
                try #require(try await client.authRequest("/hls/tnt/master.m3u8?token=\(GateFixtures.token())")["X-Token-Session"])
            }
            func segment(_ session: String) async throws -> String? {
                try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(session)"]).tokenStatus
            }
            let before = try await open()
            #expect(try await segment(before) == "VALID_SESSION")
            // A changed secret file is noticed as a changed key file is.
            _ = GateFixtures.sessionSecret(String(repeating: "rotated-", count: 6), in: directory)
            runtime.reloader.reloadIfChanged()
            #expect(try await segment(before) == "INVALID_SESSION", "a session of the secret that left is over")
            let after = try await open()
            #expect(try await segment(after) == "VALID_SESSION")
            #expect(try await client.execute(uri: "/readyz", method: .get).bodyText.contains("reload") == false)

            _ = GateFixtures.sessionSecret("short", in: directory)
            #expect(!runtime.reloader.reload(because: "test"))
            #expect(try await segment(after) == "VALID_SESSION", "a failed reload keeps the secrets in use")
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            #expect(ready.bodyText.contains("the last reload failed, the previous keys and secrets stay in use: "), "\(ready.bodyText)")
            #expect(ready.bodyText.contains(secret), "\(ready.bodyText)")

            _ = GateFixtures.sessionSecret(String(repeating: "rotated-", count: 6), in: directory)
            #expect(runtime.reloader.reload(because: "test"))
            #expect(try await client.execute(uri: "/readyz", method: .get).bodyText.contains("reload failed") == false)
        }
    }

    @Test func aValidMediaTokenOpensASessionForThatResource() async throws {
        try await withSessions { client, _ in
            let start = try await client.authRequest("/hls/tnt/master.m3u8?token=\(GateFixtures.token())")
            #expect(start.tokenStatus == "VALID_TOKEN")
            let session = try #require(start["X-Token-Session"])
            #expect(session.utf8.count == 194)

            let segment = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(segment.status == .ok)
            #expect(segment.tokenStatus == "VALID_SESSION")
            #expect(segment["X-Token-Resource"] == "TNT")
            #expect(segment["X-Token-Session"] == nil, "a session is not renewed by itself")
            #expect(segment["Cache-Control"] == "no-store")

            let byParam = try await client.authRequest("/hls/tnt/seg2.ts?tgs=\(session)")
            #expect(byParam.tokenStatus == "VALID_SESSION")
            let byHeader = try await client.authRequest("/hls/tnt/seg3.ts", headers: [HTTPField.Name("X-Token-Session")!: session])
            #expect(byHeader.tokenStatus == "VALID_SESSION")

            let otherResource = try await client.authRequest(
                "/hls/cnn/seg1.ts",
                resource: "CNN",
                headers: [.cookie: "tokengate_session=\(session)"]
            )
            #expect(otherResource.status == .forbidden)
            #expect(otherResource.tokenStatus == "INVALID_SESSION")

            let forged = String(session.dropLast(2)) + (session.hasSuffix("AA") ? "BA" : "AA")
            let bad = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(forged)"])
            #expect(bad.status == .forbidden)
            #expect(bad.tokenStatus == "INVALID_SESSION")

            clock.advance(600_001)
            let expired = try await client.authRequest("/hls/tnt/seg9.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(expired.status == .unauthorized)
            #expect(expired.tokenStatus == "SESSION_EXPIRED")
        }
    }

    @Test func aSessionIsBoundToTheDeviceThatOpenedIt() async throws {
        try await withSessions { client, _ in
            let device = HTTPField.Name("X-Token-Device-Id")!
            let start = try await client.authRequest("/a?token=\(GateFixtures.token())", headers: [device: "device-1"])
            let session = try #require(start["X-Token-Session"])
            let same = try await client.authRequest("/b", headers: [device: "device-1", .cookie: "tokengate_session=\(session)"])
            #expect(same.tokenStatus == "VALID_SESSION")
            let other = try await client.authRequest("/b", headers: [device: "device-2", .cookie: "tokengate_session=\(session)"])
            #expect(other.tokenStatus == "DEVICE_MISMATCH")
        }
    }

    @Test func sessionsNeverTouchTheReplayStoreAndAFreshTokenStillWorksAfterExpiry() async throws {
        try await withSessions(lifetime: 60) { client, runtime in
            let token = GateFixtures.token()
            let start = try await client.authRequest("/a?token=\(token)")
            let session = try #require(start["X-Token-Session"])
            for index in 0..<20 {
                let segment = try await client.authRequest("/seg\(index).ts", headers: [.cookie: "tokengate_session=\(session)"])
                #expect(segment.tokenStatus == "VALID_SESSION")
            }
            let metrics = String(decoding: runtime.metrics.render(), as: UTF8.self)
            #expect(metrics.contains(#"tokengate_replay_store_operations_total{outcome="accepted"} 1"#))
            #expect(metrics.contains(#"tokengate_sessions_total{result="valid"} 20"#))
            #expect(metrics.contains(#"tokengate_sessions_total{result="issued"} 1"#))
            // The same one-time token with an expired session: still a replay.
            clock.advance(61_000)
            let replayed = try await client.authRequest("/a?token=\(token)", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(replayed.tokenStatus == "TOKEN_REPLAYED")
            // A new token with an expired session: the token decides.
            let fresh = try await client.authRequest("/a?token=\(GateFixtures.token())", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(fresh.tokenStatus == "VALID_TOKEN")
        }
    }

    /// docs/DESIGN.md#the-session-cookie: the cookie comes from the gate, `Secure` unless the proxy
    /// reported plain HTTP, its `Max-Age` the session's lifetime.
    @Test func theCookieComesFromTheGate() async throws {
        try await withSessions(lifetime: 600) { client, _ in
            let proto = HTTPField.Name("X-Forwarded-Proto")!
            let path = HTTPField.Name("X-Token-Cookie-Path")!
            let https = try await client.authRequest("/hls/tnt/master.m3u8?token=\(GateFixtures.token())")
            let session = try #require(https["X-Token-Session"])
            #expect(https["X-Token-Set-Cookie"] == "tokengate_session=\(session); Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure")
            #expect(https["Cache-Control"] == "no-store, private")
            let plain = try await client.authRequest(
                "/hls/tnt/master.m3u8?token=\(GateFixtures.token())",
                headers: [proto: "http", path: "/hls/tnt/"]
            )
            let plainSession = try #require(plain["X-Token-Session"])
            #expect(plain["X-Token-Set-Cookie"] == "tokengate_session=\(plainSession); Path=/hls/tnt/; Max-Age=600; HttpOnly; SameSite=Lax")
            let odd = try await client.authRequest("/a?token=\(GateFixtures.token())", headers: [proto: "HTTP"])
            #expect(odd["X-Token-Set-Cookie"]?.hasSuffix("; Secure") == true, "an odd scheme must keep Secure")
            let segment = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(segment.tokenStatus == "VALID_SESSION")
            #expect(segment["X-Token-Set-Cookie"] == nil && segment["X-Token-Session"] == nil)
            for bad in ["/hls/cnn/", "hls/", "/hls/tnt;x/", "/hls%2Ftnt/", "/hls/tnt/,"] {
                let answer = try await client.authRequest("/hls/tnt/master.m3u8?token=\(GateFixtures.token())", headers: [path: bad])
                #expect(answer.status == .internalServerError, "\(bad)")
                #expect(answer.tokenStatus == "BAD_COOKIE_PATH")
            }
        }
    }

    @Test func withoutSessionSecretsACredentialIsIgnored() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let response = try await client.authRequest("/a", headers: [.cookie: "tokengate_session=\(String(repeating: "A", count: 194))"])
            #expect(response.tokenStatus == "NO_TOKEN")
        }
    }
}
