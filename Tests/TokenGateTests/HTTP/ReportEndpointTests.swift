import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `POST /v1/verify` and `/v1/inspect`: the report objects (docs/DESIGN.md#output-forms) of the library's `TokenReport`.
@Suite struct ReportEndpointTests {
    let clock = GateFixtures.Clock()

    /// The error body of these routes and the debugger's, byte for byte.
    @Test func errorBodyIsPinned() {
        let escaped = GateFixtures.hostileJSON
        #expect(ReportEndpoints.errorBody(GateFixtures.hostileText) == #"{"error":""# + escaped + #""}"# + "\n")
        #expect(
            ReportEndpoints.errorBody("bad", field: GateFixtures.hostileText) == #"{"error":"bad","field":""# + escaped + #""}"# + "\n"
        )
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ body: String) async throws -> (TestResponse, [[String: Any]]) {
        let response = try await client.executeRequest(uri: uri, method: .post, headers: [:], body: ByteBuffer(string: body))
        let array = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]]) ?? []
        return (response, array)
    }

    @Test func verifyAnswersAReportPerTokenWithoutSpendingThem() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let media = GateFixtures.token()
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        try await runtime.application().test(.router) { client in
            let (response, reports) = try await post(client, "/v1/verify?resource=TNT", "\(media)\n\(forged)\nnot a token\n")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(reports.map { $0["status"] as? String } == ["VALID_TOKEN", "INVALID_SIGNATURE", "INVALID_TOKEN_FORMAT"])
            #expect(reports.map { $0["input"] as? Int } == [1, 2, 3])
            #expect(reports[0]["resourceID"] as? String == "TNT")
            #expect(reports[0]["kind"] as? String == "media")
            let (_, again) = try await post(client, "/v1/verify?resource=CNN", media)
            #expect(again.first?["status"] as? String == "INVALID_RESOURCE_ID")
            // The report spent nothing: the player's request is still allowed, once.
            let played = try await client.authRequest("/a?token=\(media)")
            #expect(played.tokenStatus == "VALID_TOKEN")
            let (_, afterPlay) = try await post(client, "/v1/verify", media)
            #expect(afterPlay.first?["status"] as? String == "VALID_TOKEN")
        }
    }

    @Test func verifyTakesNowAndTheDeviceAsQueryParameters() async throws {
        var request = GateFixtures.request(.authorization)
        request.fingerprint = DeviceFingerprint.hash("device-1", hexLength: 64)
        let token = GateFixtures.token(request)
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let (_, right) = try await post(client, "/v1/verify?device-id=device-1", token)
            #expect(right.first?["status"] as? String == "VALID_TOKEN")
            let (_, wrong) = try await post(client, "/v1/verify?device-id=device-2", token)
            #expect(wrong.first?["status"] as? String == "DEVICE_MISMATCH")
            let (_, later) = try await post(client, "/v1/verify?now=2030-01-01T00:00:00Z", token)
            #expect(later.first?["status"] as? String == "TOKEN_EXPIRED")
            let (both, _) = try await post(client, "/v1/verify?device-id=a&fingerprint=b", token)
            #expect(both.status == .badRequest)
            let (badNow, _) = try await post(client, "/v1/verify?now=yesterday", token)
            #expect(badNow.status == .badRequest)
        }
    }

    @Test func inspectDecodesWithoutJudgement() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let (response, reports) = try await post(client, "/v1/inspect", GateFixtures.token(key: GateFixtures.untrustedKey) + "\n<x>\n")
            #expect(response.status == .ok)
            #expect(reports.count == 2)
            #expect(reports[0]["status"] is NSNull)
            #expect(reports[0]["requestorID"] as? String == "TNT")
            #expect(reports[1]["status"] as? String == "INVALID_TOKEN_FORMAT")
        }
    }

    /// The report routes read text, a vendor's JSON or bytes, as their OpenAPI description says; a body of
    /// another type (a form, multipart) is 415 naming what is read. Unlabelled, the body is read as text.
    @Test func aBodyOfAnotherMediaTypeIs415() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        let media = GateFixtures.token()
        try await runtime.application().test(.router) { client in
            for route in ["/v1/verify", "/v1/inspect"] {
                for type in ["application/x-www-form-urlencoded", "multipart/form-data; boundary=b", "image/png"] {
                    let answer = try await client.executeRequest(
                        uri: route,
                        method: .post,
                        headers: [.contentType: type],
                        body: ByteBuffer(string: media)
                    )
                    #expect(answer.status == .unsupportedMediaType, "\(route) \(type)")
                    #expect(String(buffer: answer.body).contains("text/plain"), "\(route) \(type)")
                }
                for type in ["text/plain; charset=utf-8", "Application/Octet-Stream", "application/json"] {
                    let answer = try await client.executeRequest(
                        uri: route,
                        method: .post,
                        headers: [.contentType: type],
                        body: ByteBuffer(string: media)
                    )
                    #expect(answer.status == .ok, "\(route) \(type)")
                }
            }
        }
    }

    @Test func badAndOversizedBodiesAreRefused() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let (empty, _) = try await post(client, "/v1/verify", "\n\n")
            #expect(empty.status == .badRequest)
            let huge = String(repeating: "A", count: ReportEndpoints.maximumBodyBytes + 1)
            let (tooLarge, _) = try await post(client, "/v1/verify", huge)
            #expect(tooLarge.status == .contentTooLarge)
            let many = String(repeating: "x\n", count: ReportEndpoints.maximumRecords + 1)
            let (tooMany, _) = try await post(client, "/v1/inspect", many)
            #expect(tooMany.status == .contentTooLarge)
            let get = try await client.executeRequest(uri: "/v1/verify", method: .get, headers: [:], body: nil)
            #expect(get.status == .methodNotAllowed)
        }
    }
}
