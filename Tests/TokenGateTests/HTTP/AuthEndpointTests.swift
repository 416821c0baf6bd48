import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The auth endpoints driven in process: every status of docs/DESIGN.md#endpoints-and-answers with its
/// HTTP answer and headers, over the real verifier, keys and replay store.
@Suite struct AuthEndpointTests {
    let clock = GateFixtures.Clock()

    func withGate(
        _ extra: [String] = [],
        base: [String] = GateFixtures.baseArguments,
        logs: LogCapture = LogCapture(),
        _ body: @Sendable (any TestClientProtocol, GateRuntime) async throws -> Void
    ) async throws {
        let runtime = try GateFixtures.runtime(extra, base: base, clock: clock, logs: logs)
        try await runtime.application().test(.router) { client in try await body(client, runtime) }
    }

    @Test func aValidMediaTokenIsAllowedWithItsValues() async throws {
        let token = GateFixtures.token()
        try await withGate { client, _ in
            let response = try await client.authRequest("/hls/tnt/master.m3u8?token=\(token)")
            #expect(response.status == .ok)
            #expect(response.tokenStatus == "VALID_TOKEN")
            #expect(response["Cache-Control"] == "no-store")
            #expect(response["X-Token-Kind"] == "media")
            #expect(response["X-Token-Requestor"] == "TNT")
            #expect(response["X-Token-Resource"] == "TNT")
            #expect(response["X-Token-Mvpd"] == "Comcast_SSO")
            #expect(response["X-Token-Expires"] == "2016-03-17T22:08:31Z")
            #expect(response["X-Token-Session"] == nil, "no session secret, no session")
        }
    }

    /// (what to change, the expected status, the HTTP code)
    @Test func everyStatusHasItsAnswer() async throws {
        let media = GateFixtures.token()
        try await withGate(["--mvpd", "Comcast_SSO"]) { client, _ in
            func check(
                _ uri: String,
                resource: String? = "TNT",
                headers: HTTPFields = [:],
                _ status: String,
                _ code: Int,
                sourceLocation: Testing.SourceLocation = #_sourceLocation
            ) async throws {
                let response = try await client.authRequest(uri, resource: resource, headers: headers)
                #expect(response.tokenStatus == status, sourceLocation: sourceLocation)
                #expect(response.status.code == code, sourceLocation: sourceLocation)
                #expect(response["Cache-Control"] == "no-store", sourceLocation: sourceLocation)
                if code != 200 {
                    #expect(response["X-Token-Kind"] == nil, sourceLocation: sourceLocation)
                    #expect(response["X-Token-Resource"] == nil, sourceLocation: sourceLocation)
                }
            }
            try await check("/live/a.ts", "NO_TOKEN", 401)
            try await check("/live/a.ts?token=", "NO_TOKEN", 401)
            try await check("/live/a.ts?token=not-a-token", "INVALID_TOKEN_FORMAT", 401)
            try await check("/live/a.ts?token=\(GateFixtures.token(key: GateFixtures.untrustedKey))", "INVALID_SIGNATURE", 403)
            try await check("/live/a.ts?token=\(GateFixtures.token(GateFixtures.request(requestor: "CNN")))", "INVALID_REQUESTOR_ID", 403)
            try await check("/live/a.ts?token=\(GateFixtures.token())", resource: "CNN", "INVALID_RESOURCE_ID", 403)
            try await check("/live/a.ts?token=\(GateFixtures.token(GateFixtures.request(mvpd: "Other_MVPD")))", "UNTRUSTED_MVPD", 403)
            try await check("/live/a.ts?token=\(media)", "VALID_TOKEN", 200)
            try await check("/live/a.ts?token=\(media)", "TOKEN_REPLAYED", 403)
            // The second default parameter name.
            try await check("/live/a.ts?x=1&auth=\(GateFixtures.token())", "VALID_TOKEN", 200)
            // The resource header is how this gate learns the expected resource.
            try await check("/live/a.ts?token=\(GateFixtures.token())", resource: nil, "NO_EXPECTED_RESOURCE", 500)
            clock.set(GateFixtures.at(-60_000))
            try await check("/live/a.ts?token=\(GateFixtures.token())", "TOKEN_NOT_YET_VALID", 401)
            clock.set(GateFixtures.at(420_000 + 30_001))
            try await check("/live/a.ts?token=\(GateFixtures.token())", "TOKEN_EXPIRED", 401)
        }
    }

    @Test func aDeviceBoundTokenNeedsItsDevice() async throws {
        var request = GateFixtures.request(.authorization)
        request.fingerprint = DeviceFingerprint.hash("device-1", hexLength: 64)
        let token = GateFixtures.token(request)
        try await withGate(["--verdict-cache-size", "0"]) { client, _ in
            let device = HTTPField.Name("X-Token-Device-Id")!
            let right = try await client.authRequest("/a?token=\(token)", headers: [device: "device-1"])
            #expect(right.tokenStatus == "VALID_TOKEN")
            #expect(right["X-Token-Kind"] == "authorization")
            let wrong = try await client.authRequest("/a?token=\(token)", headers: [device: "device-2"])
            #expect(wrong.tokenStatus == "DEVICE_MISMATCH")
            #expect(wrong.status == .forbidden)
        }
    }

    @Test func theTokenIsFoundInTheConfiguredHeaderCookieAndParameters() async throws {
        try await withGate(["--token-param", "t", "--token-header", "X-Media-Token", "--token-cookie", "mt"]) { client, _ in
            let byParam = try await client.authRequest("/a?t=\(GateFixtures.token())")
            #expect(byParam.tokenStatus == "VALID_TOKEN")
            let defaultNameNotUsed = try await client.authRequest("/a?token=\(GateFixtures.token())")
            #expect(defaultNameNotUsed.tokenStatus == "NO_TOKEN")
            let byHeader = try await client.authRequest("/a", headers: [HTTPField.Name("X-Media-Token")!: GateFixtures.token()])
            #expect(byHeader.tokenStatus == "VALID_TOKEN")
            let byCookie = try await client.authRequest("/a", headers: [.cookie: "other=1; mt=\(GateFixtures.token()); z=2"])
            #expect(byCookie.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func aPercentEncodedRawTokenIsRead() async throws {
        var request = GateFixtures.request()
        request.encoding = .raw
        let raw = try TokenMinter.mint(request, key: GateFixtures.signingKey)
        let encoded = raw.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        try await withGate { client, _ in
            let response = try await client.authRequest("/a?token=\(encoded)")
            #expect(response.tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func forwardAuthReadsXForwardedUri() async throws {
        try await withGate { client, _ in
            let response = try await client.executeRequest(
                uri: "/v1/forward-auth",
                method: .get,
                headers: [
                    HTTPField.Name("X-Forwarded-Uri")!: "/hls/a.m3u8?token=\(GateFixtures.token())",
                    HTTPField.Name("X-Forwarded-Method")!: "GET", HTTPField.Name("X-Forwarded-Host")!: "media.example",
                    HTTPField.Name("X-Token-Resource")!: "TNT",
                ],
                body: nil
            )
            #expect(response.status == .ok)
            #expect(response.tokenStatus == "VALID_TOKEN")
            let refused = try await client.executeRequest(
                uri: "/v1/forward-auth",
                method: .get,
                headers: [
                    HTTPField.Name("X-Forwarded-Uri")!: "/hls/a.m3u8", HTTPField.Name("X-Token-Resource")!: "TNT",
                ],
                body: nil
            )
            #expect(refused.status == .unauthorized)
            #expect(refused.tokenStatus == "NO_TOKEN")
        }
    }

    @Test func extAuthzTakesTheAppendedPathAndAnyMethod() async throws {
        try await withGate { client, _ in
            for method in [HTTPRequest.Method.get, .post, .head, .put] {
                let response = try await client.executeRequest(
                    uri: "/v1/ext-authz/hls/a.m3u8?x=1&token=\(GateFixtures.token())",
                    method: method,
                    headers: [HTTPField.Name("X-Token-Resource")!: "TNT"],
                    body: nil
                )
                #expect(response.status == .ok, "\(method)")
                #expect(response.tokenStatus == "VALID_TOKEN")
            }
            let none = try await client.executeRequest(
                uri: "/v1/ext-authz/hls/a.m3u8",
                method: .get,
                headers: [HTTPField.Name("X-Token-Resource")!: "TNT"],
                body: nil
            )
            #expect(none.status == .unauthorized)
            #expect(none.tokenStatus == "NO_TOKEN")
        }
    }

    @Test func onlyGetAndHeadReachTheProxyEndpoints() async throws {
        try await withGate { client, _ in
            let response = try await client.executeRequest(uri: "/v1/auth-request", method: .post, headers: [:], body: nil)
            #expect(response.status == .methodNotAllowed)
            #expect(response["Cache-Control"] == "no-store")
            let unknown = try await client.executeRequest(uri: "/v1/nothing", method: .get, headers: [:], body: nil)
            #expect(unknown.status == .notFound)
        }
    }

    @Test func hostileTokenFieldsCannotInjectAHeader() async throws {
        let hostile = "TNT\r\nSet-Cookie: stolen=1\r\nX-Injected: \u{202E}é"
        let token = GateFixtures.hostileToken(resource: hostile, mvpd: "MVPD\nX-Injected: 2\t")
        try await withGate(["--resource", hostile], base: ["--key", GateFixtures.publicKey, "--requestor", "TNT"]) { client, _ in
            let response = try await client.authRequest("/a?token=\(token)", resource: nil)
            #expect(response.tokenStatus == "VALID_TOKEN")
            #expect(response["X-Injected"] == nil)
            #expect(response["Set-Cookie"] == nil)
            let resource = try #require(response["X-Token-Resource"])
            #expect(resource == "TNT%0D%0ASet-Cookie:%20stolen=1%0D%0AX-Injected:%20%E2%80%AE%C3%A9")
            #expect(response["X-Token-Mvpd"] == "MVPD%0AX-Injected:%202%09")
            for field in response.headers {
                #expect(field.value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(field.name): \(field.value)")
            }
        }
    }

    @Test func oneLogLinePerRefusalWithTheTokenIDButNeverTheToken() async throws {
        let logs = LogCapture()
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        let valid = GateFixtures.token()
        try await withGate(logs: logs) { client, _ in
            _ = try await client.authRequest("/a?token=\(valid)")
            _ = try await client.authRequest("/a?token=\(forged)")
            _ = try await client.authRequest("/a")
        }
        let refusals = logs.all.filter { $0.contains("refused") }
        #expect(refusals.count == 2)
        #expect(refusals[0].contains("status=INVALID_SIGNATURE"))
        #expect(refusals[0].range(of: #"token_id=[0-9a-f]{12}( |$)"#, options: .regularExpression) != nil, "\(refusals[0])")
        #expect(refusals[1].contains("status=NO_TOKEN"))
        #expect(refusals[1].contains("token_id=-"))
        for line in logs.all {
            #expect(!line.contains(forged) && !line.contains(valid) && !line.contains(String(forged.prefix(40))))
        }
    }

    @Test func jsonLogLinesAreOneObjectEach() async throws {
        let logs = LogCapture(format: .json)
        try await withGate(logs: logs) { client, _ in
            _ = try await client.authRequest("/a?token=bad\u{1B}[31m")
        }
        let line = try #require(logs.all.first { $0.contains("refused") })
        #expect(line.hasSuffix("}\n"))
        #expect(!line.contains("\u{1B}"))
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["status"] as? String == "INVALID_TOKEN_FORMAT")
        #expect(object?["message"] as? String == "refused")
    }
}
