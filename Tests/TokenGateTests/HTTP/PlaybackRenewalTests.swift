import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Every exchange opens a playback session, and `POST /v1/playback/renew`
/// makes a fresh CDN token from it (docs/DESIGN.md#renewal): for the
/// session's resource only, while it lasts, without a media token.
struct PlaybackRenewalTests {
    typealias Profiles = PlaybackExchangeTests.Profiles

    static func runtime(_ profiles: Profiles, kind: String, clock: GateFixtures.Clock, extra: [String] = []) throws -> GateRuntime {
        try GateFixtures.runtime(
            ["--cdn-profile", profiles.paths[kind]!, "--session-secret", GateFixtures.sessionSecret(in: profiles.directory)] + extra,
            clock: clock
        )
    }

    static func renew(
        _ client: some TestClientProtocol,
        _ body: String,
        session: String?,
        via carrier: String = "header"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        var uri = "/v1/playback/renew"
        switch (carrier, session) {
        case (_, nil): break
        case ("cookie", let session?): headers[.cookie] = "tokengate_session=\(session)"
        case ("query", let session?): uri += "?tgs=\(session)"
        case (_, let session?): headers[.init("X-Token-Session")!] = session
        }
        return try await client.executeRequest(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    @Test func anExchangeOpensASessionAndRenewalIssuesAFreshTokenFromItInEveryCarrier() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let clock = GateFixtures.Clock()
        let runtime = try Self.runtime(profiles, kind: "akamai", clock: clock)
        try await runtime.application().test(.router) { client in
            let answer = try await PlaybackExchangeTests.post(client, "{\"token\":\"\(GateFixtures.token())\",\"resource\":\"TNT\"}")
            #expect(answer.status == .ok)
            let body = PlaybackExchangeTests.json(answer)
            let session = try #require(body["session"] as? String)
            #expect(body["sessionExpires"] as? String != nil)
            #expect(answer.headers[values: .setCookie].contains { $0.hasPrefix("tokengate_session=\(session);") })
            let first = try #require((body["cookies"] as? [[String: Any]])?.first?["value"] as? String)

            for carrier in ["header", "cookie", "query"] {
                clock.advance(60_000)
                let renewed = try await Self.renew(client, "{\"resource\":\"TNT\"}", session: session, via: carrier)
                #expect(renewed.status == .ok, "\(carrier): \(String(buffer: renewed.body))")
                #expect(renewed.headers[.init("X-Token-Status")!] == "VALID_SESSION")
                let grant = PlaybackExchangeTests.json(renewed)
                #expect(grant["status"] as? String == "VALID_SESSION")
                #expect(grant["session"] == nil, "renewal opens no new session")
                let value = try #require((grant["cookies"] as? [[String: Any]])?.first?["value"] as? String)
                #expect(value != first, "\(carrier): the same token again")
                // The fresh token verifies at the renewal's time, for the resource's folder.
                let facts = try PlaybackExchangeTests.facts("https://akamai.media.test/hls/tnt/seg-9.ts", clock: clock)
                try EdgeAuthToken(parsing: value).verify(key: EdgeAuthKey(hex: profiles.akamaiKey), facts: facts)
            }
        }
    }

    @Test func renewalIsForTheSessionsResourceWhileItLasts() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let clock = GateFixtures.Clock()
        let runtime = try Self.runtime(profiles, kind: "akamai", clock: clock, extra: ["--session-lifetime", "600"])
        try await runtime.application().test(.router) { client in
            let answer = try await PlaybackExchangeTests.post(client, "{\"token\":\"\(GateFixtures.token())\",\"resource\":\"TNT\"}")
            let session = try #require(PlaybackExchangeTests.json(answer)["session"] as? String)

            let cases: [(String, String?, HTTPResponse.Status, String)] = [
                ("{\"resource\":\"CNN\"}", session, .forbidden, "INVALID_SESSION"),  // another resource of the profile
                ("{\"resource\":\"ESPN\"}", session, .forbidden, "INVALID_RESOURCE_ID"),  // a resource the profile has no URL for
                ("{\"resource\":\"TNT\"}", nil, .unauthorized, "NO_TOKEN"),
                ("{\"resource\":\"TNT\"}", String(session.dropLast()) + (session.last == "A" ? "B" : "A"), .forbidden, "INVALID_SESSION"),
                ("{\"resource\":\"TNT\",\"token\":\"x\"}", session, .badRequest, "BAD_REQUEST"),
                ("{\"resource\":\"TNT\",\"resource\":\"CNN\"}", session, .badRequest, "BAD_REQUEST"),
                ("[]", session, .badRequest, "BAD_REQUEST"),
            ]
            for (body, credential, status, tokenStatus) in cases {
                let refused = try await Self.renew(client, body, session: credential)
                #expect(refused.status == status, "\(body): \(String(buffer: refused.body))")
                #expect(refused.headers[.init("X-Token-Status")!] == tokenStatus, "\(body)")
                #expect(PlaybackExchangeTests.json(refused)["cookies"] == nil)
            }
            // Two different sessions read two ways.
            var headers: HTTPFields = [.contentType: "application/json", .init("X-Token-Session")!: session]
            headers[.cookie] = "tokengate_session=\(String(session.dropLast()))B"
            let doubled = try await client.executeRequest(
                uri: "/v1/playback/renew",
                method: .post,
                headers: headers,
                body: ByteBuffer(string: "{\"resource\":\"TNT\"}")
            )
            #expect(doubled.status == .badRequest)
            #expect(String(buffer: doubled.body).contains("two different playback sessions"))
            // GET is not renewal.
            let get = try await client.executeRequest(uri: "/v1/playback/renew?tgs=\(session)", method: .get, headers: [:], body: nil)
            #expect(get.status == .methodNotAllowed)
            #expect(get.headers[.allow] == "POST")

            clock.advance(601_000)
            let ended = try await Self.renew(client, "{\"resource\":\"TNT\"}", session: session)
            #expect(ended.status == .unauthorized)
            #expect(ended.headers[.init("X-Token-Status")!] == "SESSION_EXPIRED")
        }
    }
}
