import EntitlementTokens
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// docs/DESIGN.md#the-gates-reading-of-a-request and docs/DESIGN.md#the-valid-one-wins: every
/// case here was read differently by the gate and nginx (or a browser)
/// before, and each test fails against that code.
@Suite struct RequestReadingTests {
    let clock = GateFixtures.Clock()
    static let device = HTTPField.Name("X-Token-Device-Id")!
    static let sessionHeader = HTTPField.Name("X-Token-Session")!

    func withGate(_ extra: [String] = [], _ body: @Sendable (any TestClientProtocol, GateRuntime) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let runtime = try GateFixtures.runtime(["--session-secret", secret] + extra, clock: clock)
        try await runtime.application().test(.router) { client in try await body(client, runtime) }
    }

    /// A raw auth request whose header lines are given one by one (HTTPFields keeps repeated lines apart).
    func request(_ client: any TestClientProtocol, _ fields: [(String, String)]) async throws -> TestResponse {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return try await client.executeRequest(uri: "/v1/auth-request", method: .get, headers: headers, body: nil)
    }

    // MARK: the query ends at the fragment

    @Test func aTokenAfterAFragmentMarkIsNoToken() async throws {
        try await withGate { client, _ in
            let token = GateFixtures.token()
            for uri in ["/hls/a.m3u8#x?token=\(token)", "/hls/a.m3u8?x=1#&token=\(token)", "/hls/a.m3u8#?token=\(token)"] {
                let answer = try await client.authRequest(uri)
                #expect(answer.tokenStatus == "NO_TOKEN", "\(uri.prefix(30))")
                #expect(answer.status == .unauthorized)
            }
            // `%23` is data, not a fragment mark.
            let encoded = try await client.authRequest("/hls/a.m3u8?x=%23&token=\(token)")
            #expect(encoded.tokenStatus == "VALID_TOKEN")
        }
    }

    // MARK: doubled fields and credentials are 400

    @Test(arguments: ["X-Original-URI", "X-Token-Resource", "X-Token-Device-Id", "X-Token-Session", "X-Forwarded-Proto"])
    func aDoubledFieldIsABadRequest(_ name: String) async throws {
        try await withGate { client, _ in
            var fields = [("X-Original-URI", "/a?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT")]
            let values = name == "X-Original-URI" ? ["/b", "/c"] : (name == "X-Token-Resource" ? ["TNT"] : ["v1", "v2"])
            for value in values { fields.append((name, value)) }
            if name == "X-Token-Resource" { fields.append((name, "TNT")) }
            let answer = try await request(client, fields)
            #expect(answer.status == .badRequest, "\(name)")
            #expect(answer.tokenStatus == "BAD_REQUEST")
            #expect(answer["X-Token-Reason"]?.contains(name) == true, "\(answer["X-Token-Reason"] ?? "no reason")")
        }
    }

    @Test func twoDifferentTokensAreABadRequestAndTheSameOneTwiceIsNot() async throws {
        try await withGate { client, _ in
            let first = GateFixtures.token()
            let second = GateFixtures.token()
            let two = try await client.authRequest("/a?token=\(first)&auth=\(second)")
            #expect(two.status == .badRequest)
            #expect(two.tokenStatus == "BAD_REQUEST")
            let twice = try await client.authRequest("/a?token=\(first)&token=\(second)")
            #expect(twice.tokenStatus == "BAD_REQUEST")
            let emptyThenValue = try await client.authRequest("/a?token=&token=\(first)")
            #expect(emptyThenValue.tokenStatus == "BAD_REQUEST", "nginx's $arg_token reads the empty one")
            // Neither ambiguous request spent the token.
            let same = try await client.authRequest("/a?token=\(first)&auth=\(first)")
            #expect(same.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func twoDifferentSessionParametersOrTooManyCookiesAreABadRequest() async throws {
        try await withGate { client, _ in
            let session = try #require(try await client.authRequest("/a?token=\(GateFixtures.token())")["X-Token-Session"])
            let two = try await client.authRequest("/seg.ts?tgs=\(session)&tgs=x")
            #expect(two.tokenStatus == "BAD_REQUEST")
            let cookies = (0..<9).map { "tokengate_session=c\($0)" }.joined(separator: "; ")
            let many = try await client.authRequest("/seg.ts", headers: [.cookie: cookies + "; tokengate_session=\(session)"])
            #expect(many.tokenStatus == "BAD_REQUEST")
        }
    }

    // MARK: the valid session wins

    @Test func aStaleCookieForAnotherChannelDoesNotShadowTheValidOne() async throws {
        try await withGate { client, _ in
            let tnt = try #require(try await client.authRequest("/hls/tnt/master.m3u8?token=\(GateFixtures.token())")["X-Token-Session"])
            let cnn = try #require(
                try await client.authRequest(
                    "/hls/cnn/master.m3u8?token=\(GateFixtures.token(GateFixtures.request(resource: "CNN")))",
                    resource: "CNN"
                )["X-Token-Session"]
            )
            // Browsers send both cookies when two paths match, in either order.
            for cookie in ["tokengate_session=\(cnn); tokengate_session=\(tnt)", "tokengate_session=\(tnt); tokengate_session=\(cnn)"] {
                let segment = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: cookie])
                #expect(segment.tokenStatus == "VALID_SESSION")
            }
            // A bad cookie beside a valid header: the header wins.
            let header = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(cnn)", Self.sessionHeader: tnt])
            #expect(header.tokenStatus == "VALID_SESSION")
            // Only the other channel's: refused, naming the carrier.
            let wrong = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "tokengate_session=\(cnn)"])
            #expect(wrong.tokenStatus == "INVALID_SESSION")
            #expect(wrong["X-Token-Reason"]?.contains("another%20resource") == true)
        }
    }

    @Test func aValidSessionBesideATokenDoesNotSpendTheToken() async throws {
        try await withGate { client, _ in
            let session = try #require(try await client.authRequest("/a?token=\(GateFixtures.token())")["X-Token-Session"])
            let token = GateFixtures.token()
            let both = try await client.authRequest("/b?token=\(token)", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(both.tokenStatus == "VALID_SESSION")
            let later = try await client.authRequest("/c?token=\(token)")
            #expect(later.tokenStatus == "VALID_TOKEN", "the token was spent by a request that a session let through")
        }
    }

    @Test func theBestFailureIsReportedExpiredBeforeDeviceBeforeInvalid() async throws {
        try await withGate(["--session-lifetime", "60"]) { client, _ in
            let session = try #require(try await client.authRequest("/a?token=\(GateFixtures.token())")["X-Token-Session"])
            let bound = try #require(
                try await client.authRequest(
                    "/a?token=\(GateFixtures.token())",
                    headers: [Self.device: "device-1"]
                )["X-Token-Session"]
            )
            clock.advance(61_000)
            let fresh = try #require(
                try await client.authRequest(
                    "/a?token=\(GateFixtures.token())",
                    headers: [Self.device: "device-1"]
                )["X-Token-Session"]
            )
            let forged = String(repeating: "A", count: 194)
            let expired = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(forged); tokengate_session=\(session)"])
            #expect(expired.tokenStatus == "SESSION_EXPIRED")
            let device = try await client.authRequest(
                "/s.ts",
                headers: [
                    .cookie: "tokengate_session=\(forged); tokengate_session=\(fresh)",
                    Self.device: "device-2",
                ]
            )
            #expect(device.tokenStatus == "DEVICE_MISMATCH")
            let both = try await client.authRequest(
                "/s.ts",
                headers: [
                    .cookie: "tokengate_session=\(fresh); tokengate_session=\(session)",
                    Self.device: "device-2",
                ]
            )
            #expect(both.tokenStatus == "SESSION_EXPIRED")
            // A candidate bound to another device is that, expired or not.
            let stale = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(bound)", Self.device: "device-2"])
            #expect(stale.tokenStatus == "DEVICE_MISMATCH")
        }
    }

    @Test func noCredentialNamesWhatWasLookedFor() async throws {
        try await withGate { client, _ in
            let answer = try await client.authRequest("/hls/tnt/seg1.ts")
            #expect(answer.tokenStatus == "NO_TOKEN")
            let reason = try #require(answer["X-Token-Reason"]).removingPercentEncoding ?? ""
            for expected in ["token or auth", "session cookie tokengate_session", "query parameter tgs", "header X-Token-Session"] {
                #expect(reason.contains(expected), "\(reason)")
            }
        }
    }

    // MARK: device binding is not optional for the client

    @Test func aDeviceBoundTokenIsRefusedWhenTheRequestNamesNoDevice() async throws {
        var request = GateFixtures.request(.authorization)
        request.fingerprint = DeviceFingerprint.hash("device-1", hexLength: 64)
        let token = GateFixtures.token(request)
        try await withGate { client, _ in
            let missing = try await client.authRequest("/a?token=\(token)")
            #expect(missing.status == .forbidden)
            #expect(missing.tokenStatus == "DEVICE_MISMATCH")
            #expect(missing["X-Token-Reason"]?.removingPercentEncoding?.contains("the request names none") == true)
            let right = try await client.authRequest("/a?token=\(token)", headers: [Self.device: "device-1"])
            #expect(right.tokenStatus == "VALID_TOKEN")
            let wrong = try await client.authRequest("/a?token=\(token)", headers: [Self.device: "device-2"])
            #expect(wrong.tokenStatus == "DEVICE_MISMATCH")
        }
        try await withGate(["--allow-unbound-device"]) { client, _ in
            let missing = try await client.authRequest("/a?token=\(token)")
            #expect(missing.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func aDeviceBoundSessionIsRefusedWhenTheRequestNamesNoDevice() async throws {
        try await withGate { client, _ in
            let session = try #require(
                try await client.authRequest(
                    "/a?token=\(GateFixtures.token())",
                    headers: [Self.device: "device-1"]
                )["X-Token-Session"]
            )
            let missing = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(missing.tokenStatus == "DEVICE_MISMATCH")
            let other = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(session)", Self.device: "device-2"])
            #expect(other.tokenStatus == "DEVICE_MISMATCH")
        }
    }

    // MARK: credential version 2

    @Test func aSessionIsBoundToTheGatesRequestorAndToTheKeyThatAdmittedIt() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let keyDirectory = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keyDirectory, withIntermediateDirectories: true)
        let keyFile = keyDirectory.appendingPathComponent("issuer.pem")
        try FileManager.default.copyItem(atPath: GateFixtures.publicKey, toPath: keyFile.path)
        let tnt = try GateFixtures.runtime(
            ["--session-secret", secret],
            base: [
                "--key", keyDirectory.path, "--requestor", "TNT",
                "--resource-header", "X-Token-Resource",
            ],
            clock: clock
        )
        let other = try GateFixtures.runtime(
            ["--session-secret", secret, "--allow-any-requestor", "--resource-header", "X-Token-Resource"],
            base: ["--key", GateFixtures.publicKey],
            clock: clock
        )
        let session = try await tnt.application().test(.router) { client in
            try #require(try await client.authRequest("/a?token=\(GateFixtures.token())")["X-Token-Session"])
        }
        try await other.application().test(.router) { client in
            let answer = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(answer.tokenStatus == "INVALID_SESSION", "a gate of another requestor honoured the session")
        }
        try await tnt.application().test(.router) { client in
            #expect(try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(session)"]).tokenStatus == "VALID_SESSION")
            try FileManager.default.removeItem(at: keyFile)
            try FileManager.default.copyItem(
                atPath: GateFixtures.keys.appendingPathComponent("trusted/test-p256.pub.pem").path,
                toPath: keyDirectory.appendingPathComponent("new.pem").path
            )
            #expect(tnt.reloadKeys())
            let answer = try await client.authRequest("/s.ts", headers: [.cookie: "tokengate_session=\(session)"])
            #expect(answer.tokenStatus == "INVALID_SESSION")
            #expect(answer["X-Token-Reason"]?.removingPercentEncoding?.contains("the key that admitted this session was removed") == true)
        }
    }
}
