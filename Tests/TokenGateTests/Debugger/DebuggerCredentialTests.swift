import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials) in the debugger and `/v1/inspect` (issue 24):
/// a software statement shown the way jwt.io shows a JWT (header, claims,
/// signature status by the gate's keys, by the pasted key, or not verified),
/// user metadata with its encrypted members marked and never decrypted, a
/// bare signed requestor ID read only when asked for with `kind=` and verified
/// against the page's requestor.
@Suite struct DebuggerCredentialTests {
    let clock = GateFixtures.Clock()

    func debuggerServer() throws -> DebuggerServer {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        return try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ body: String, key: String? = nil) async throws -> (TestResponse, [String: Any]) {
        var headers: HTTPFields = [:]
        var text = body
        if let key {
            headers[.contentType] = "multipart/form-data; boundary=\(DebuggerPastedKeyTests.boundary)"
            text = DebuggerPastedKeyTests.multipart([("input", body), ("key", key)])
        }
        let response = try await client.executeRequest(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: text))
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) ?? [:]
        return (response, object as? [String: Any] ?? ["array": object])
    }

    @Test func aSoftwareStatementIsShownAsJWTWithItsSignatureStatus() async throws {
        let server = try debuggerServer()
        let trusted = try DebuggerFixtures.statement(key: GateFixtures.signingKey)
        let forged = try DebuggerFixtures.statement(key: GateFixtures.untrustedKey)
        let expired = try DebuggerFixtures.statement(key: GateFixtures.signingKey, expires: GateFixtures.issued)
        let token = GateFixtures.token()
        try await server.application().test(.router) { client in
            let (_, answer) = try await post(client, "/debugger/report", [trusted, forged, expired, token].joined(separator: "\n"))
            let reports = try #require(answer["reports"] as? [[String: Any]])
            try #require(reports.count == 4)
            #expect(reports.map { $0["kind"] as? String } == ["software-statement", "software-statement", "software-statement", "media"])
            #expect(reports.map { $0["status"] as? String } == ["VALID_TOKEN", "INVALID_SIGNATURE", "TOKEN_EXPIRED", "VALID_TOKEN"])
            #expect((reports[0]["header"] as? [String: Any])?["kid"] as? String == "kid-1")
            #expect((reports[0]["claims"] as? [String: Any])?["software_id"] as? String == "app-<b>1</b>")
            #expect((reports[0]["verifiedBy"] as? String)?.contains("test-rsa2048.pub.pem") == true)
            #expect(reports[1]["verifiedBy"] is NSNull)
            #expect(answer["encoded"] as? [String] == [trusted, forged, expired, token])

            // The forged statement with its own key pasted: signed by the pasted key, never VALID_TOKEN.
            let (response, pasted) = try await post(client, "/debugger/report", forged, key: DebuggerFixtures.untrustedPublicPEM)
            #expect((pasted["reports"] as? [[String: Any]])?.first?["status"] as? String == "INVALID_SIGNATURE")
            let check = try #require((pasted["pastedKey"] as? [[String: Any]])?.first)
            #expect(check["status"] as? String == "SIGNED_BY_PASTED_KEY")
            #expect(!String(buffer: response.body).contains("VALID_TOKEN"))
        }
    }

    @Test func userMetadataIsShownWithItsEncryptedMembersMarkedNeverDecrypted() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            let (_, answer) = try await post(client, "/debugger/report", DebuggerFixtures.metadata)
            let report = try #require((answer["reports"] as? [[String: Any]])?.first)
            #expect(answer["encoded"] as? [String] == [DebuggerFixtures.metadata])
            // Among other records, a one-line metadata document is read too.
            let (_, mixed) = try await post(client, "/debugger/report", GateFixtures.token() + "\n" + DebuggerFixtures.metadata + "\n")
            #expect((mixed["reports"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["media", "user-metadata"])
            #expect(report["kind"] as? String == "user-metadata")
            #expect(report["encrypted"] as? [String] == ["userID"])
            #expect(report["updated"] as? String == "2016-03-17T22:00:00Z")
            let data = try #require((report["metadata"] as? [String: Any])?["data"] as? [String: Any])
            #expect(data["userID"] as? String == "ZW5jcnlwdGVk", "shown as the ciphertext it is")
            #expect(report["status"] is NSNull)
        }
    }

    @Test func aBareSignedRequestorIDIsReadAsOneOnlyWhenAsked() async throws {
        let server = try debuggerServer()
        let signature = Data((0..<256).map { UInt8($0) }).base64EncodedString()
        try await server.application().test(.router) { client in
            let (_, detected) = try await post(client, "/debugger/report", signature)
            #expect((detected["reports"] as? [[String: Any]])?.first?["kind"] as? String != "signed-requestor-id")
            let (_, asked) = try await post(client, "/debugger/report?kind=signed-requestor-id", signature)
            let report = try #require((asked["reports"] as? [[String: Any]])?.first)
            #expect(report["kind"] as? String == "signed-requestor-id")
            #expect((report["signedRequestorID"] as? [String: Any])?["bytes"] as? Int == 256)
            let (bad, _) = try await post(client, "/debugger/report?kind=jwt", signature)
            #expect(bad.status == .badRequest)
        }
    }

    static func report(_ answer: [String: Any]) -> [String: Any] { (answer["reports"] as? [[String: Any]])?.first ?? [:] }

    @Test func aSignedRequestorIDIsVerifiedAgainstThePagesRequestorByTheGatesKeysOrThePastedKey() async throws {
        let server = try debuggerServer()
        let programmer = try ProgrammerPrivateKey(path: GateFixtures.keys.appendingPathComponent("test-rsa2048.pem").path)
        let stranger = try ProgrammerPrivateKey(path: GateFixtures.untrustedKeyPath)
        let trusted = try programmer.signRequestorID("TNT").base64
        let forged = try stranger.signRequestorID("TNT").base64
        try await server.application().test(.router) { client in
            let kind = "/debugger/report?kind=signed-requestor-id"
            // Signed by the gate's key, for the page's requestor: verified, naming the key and digest.
            let (_, valid) = try await post(client, kind + "&requestor=TNT", trusted)
            #expect(Self.report(valid)["status"] as? String == "VALID_TOKEN", "\(Self.report(valid))")
            #expect((Self.report(valid)["verifiedBy"] as? String)?.contains("test-rsa2048.pub.pem") == true)
            #expect((Self.report(valid)["signedRequestorID"] as? [String: Any])?["digest"] as? String == "SHA-256")
            // Another requestor: the same signature proves nothing.
            let (_, other) = try await post(client, kind + "&requestor=CNN", trusted)
            #expect(Self.report(other)["status"] as? String == "INVALID_SIGNATURE")
            #expect(Self.report(other)["verifiedBy"] is NSNull)
            // No requestor: shown, not verified (docs/DESIGN.md#telling-the-kinds-apart).
            let (_, shown) = try await post(client, kind, trusted)
            #expect(Self.report(shown)["status"] is NSNull)
            // Forged with another key, that key pasted: signed by the pasted key, never VALID_TOKEN.
            let (response, pasted) = try await post(client, kind + "&requestor=TNT", forged, key: DebuggerFixtures.untrustedPublicPEM)
            #expect(Self.report(pasted)["status"] as? String == "INVALID_SIGNATURE")
            let check = try #require((pasted["pastedKey"] as? [[String: Any]])?.first)
            #expect(check["status"] as? String == "SIGNED_BY_PASTED_KEY", "\(check)")
            #expect(!String(buffer: response.body).contains("VALID_TOKEN"))
            // The pasted key is not tried when the gate's key verifies, nor without a requestor.
            let (_, both) = try await post(client, kind + "&requestor=TNT", trusted, key: DebuggerFixtures.untrustedPublicPEM)
            #expect((both["pastedKey"] as? [[String: Any]])?.first?["tried"] as? Bool == false)
            let (_, none) = try await post(client, kind, forged, key: DebuggerFixtures.untrustedPublicPEM)
            #expect(((none["pastedKey"] as? [[String: Any]])?.first?["reason"] as? String)?.contains("no requestor") == true)
        }
    }

    @Test func v1InspectReportsTheNewKindsWithoutJudgingThem() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let statement = try DebuggerFixtures.statement(key: GateFixtures.signingKey)
        let signature = Data((0..<256).map { UInt8($0) }).base64EncodedString()
        try await runtime.application().test(.router) { client in
            let (response, answer) = try await post(
                client,
                "/v1/inspect",
                [statement, DebuggerFixtures.metadata, GateFixtures.token()].joined(separator: "\n")
            )
            #expect(response.status == .ok)
            let reports = try #require(answer["array"] as? [[String: Any]])
            #expect(reports.map { $0["kind"] as? String } == ["software-statement", "user-metadata", "media"])
            #expect(reports[0]["status"] is NSNull, "inspect decodes; it does not verify")
            #expect(reports[0]["verifiedBy"] is NSNull)
            let (_, asked) = try await post(client, "/v1/inspect?kind=signed-requestor-id", signature)
            #expect((asked["array"] as? [[String: Any]])?.first?["kind"] as? String == "signed-requestor-id")
            let (unknown, _) = try await post(client, "/v1/inspect?kind=token", signature)
            #expect(unknown.status == .badRequest)
            // /v1/verify stays the tokens' route: a statement there is a token format error.
            let (_, verify) = try await post(client, "/v1/verify", statement)
            #expect((verify["array"] as? [[String: Any]])?.first?["status"] as? String == "INVALID_TOKEN_FORMAT")
        }
    }
}
