import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The decision as a plain function (docs/DESIGN.md#the-request-path): a
/// `GateRequest` in, a `GateDecision` out, no HTTP, an in-memory replay store,
/// and "now" taken from the request alone: the gate's own clock is set a year
/// later, so a decision that read it anywhere would judge every token expired
/// (docs/DESIGN.md#one-reading-of-now). One row per status, and the session
/// and device rules; the endpoint tests check the same statuses through HTTP.
@Suite struct AuthGateTests {
    /// The instant every request is judged at unless a row says otherwise.
    static let now = GateFixtures.at(60_000)

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        var arguments: [String] = []
        /// The gate issues and reads sessions (a secret written for the row, removed after it).
        var sessions = false
        var replay: ReplayStoreFactory.Made? = nil
        /// Decides what the row needs (a session to present, a token spent
        /// before) and returns the decision the row judges.
        let decide: @Sendable (AuthGate) async -> GateDecision
        let status: GateStatus
        var testDescription: String { name }
    }

    /// A request as the HTTP layer would make it, credentials as sent.
    static func request(
        tokens: [String] = [],
        sessions: [String] = [],
        resource: String? = "TNT",
        deviceID: String? = nil,
        at now: TokenTimestamp = now,
        doubled: [String] = [],
        path: Substring = "/hls/tnt/a.ts",
        cookiePath: String? = nil
    ) -> GateRequest {
        var request = GateRequest(resource: resource, deviceID: deviceID, now: now)
        request.tokens = tokens.map { .init(value: Substring($0), carrier: .query("token")) }
        request.sessions = sessions.map { .init(value: Substring($0), carrier: .cookie("tokengate_session")) }
        request.doubledFields = doubled
        request.originalPath = path
        request.originalURI = path
        request.cookiePath = cookiePath
        return request
    }

    static func token(
        _ kind: TokenKind = .media,
        resource: String = "TNT",
        requestor: String = "TNT",
        mvpd: String = "Comcast_SSO",
        device: String? = nil,
        key: SigningKey = GateFixtures.signingKey
    ) -> String {
        var request = GateFixtures.request(kind, resource: resource, requestor: requestor, mvpd: mvpd)
        request.fingerprint = device.flatMap { DeviceFingerprint.hash($0, hexLength: 64) }
        return GateFixtures.token(request, key: key)
    }

    /// The session a valid media token opens, to present on a later request.
    static func session(_ gate: AuthGate) async -> String {
        await gate.decide(request(tokens: [token()])).session ?? "no session was issued"
    }

    static let rows: [Row] = [
        Row(name: "a valid media token", decide: { await $0.decide(request(tokens: [token()])) }, status: .verdict(.validToken)),
        Row(name: "no credential", decide: { await $0.decide(request()) }, status: .noToken),
        Row(name: "not a token", decide: { await $0.decide(request(tokens: ["not-a-token"])) }, status: .verdict(.invalidTokenFormat)),
        Row(
            name: "signed by an untrusted key",
            decide: { await $0.decide(request(tokens: [token(key: GateFixtures.untrustedKey)])) },
            status: .verdict(.invalidSignature)
        ),
        Row(
            name: "an authorization token past its ttl and the leeway",
            decide: { await $0.decide(request(tokens: [token(.authorization)], at: GateFixtures.at(3_600_000 + 30_001))) },
            status: .verdict(.tokenExpired)
        ),
        Row(
            name: "a token issued after now and the leeway",
            decide: { await $0.decide(request(tokens: [token()], at: GateFixtures.at(-30_001))) },
            status: .verdict(.tokenNotYetValid)
        ),
        Row(
            name: "another requestor's token",
            decide: { await $0.decide(request(tokens: [token(requestor: "CNN")])) },
            status: .verdict(.invalidRequestorID)
        ),
        Row(
            name: "a token for another resource",
            decide: { await $0.decide(request(tokens: [token(resource: "CNN")])) },
            status: .verdict(.invalidResourceID)
        ),
        Row(
            name: "an MVPD outside the allow-list",
            arguments: ["--mvpd", "Other_MVPD"],
            decide: { await $0.decide(request(tokens: [token()])) },
            status: .verdict(.untrustedMVPD)
        ),
        Row(
            name: "a device-bound token from its device",
            decide: { await $0.decide(request(tokens: [token(.authorization, device: "device-1")], deviceID: "device-1")) },
            status: .verdict(.validToken)
        ),
        Row(
            name: "a device-bound token from another device",
            decide: { await $0.decide(request(tokens: [token(.authorization, device: "device-1")], deviceID: "device-2")) },
            status: .verdict(.deviceMismatch)
        ),
        Row(
            name: "a device-bound token from a request that names no device",
            decide: { await $0.decide(request(tokens: [token(.authorization, device: "device-1")])) },
            status: .verdict(.deviceMismatch)
        ),
        Row(
            name: "a media token presented twice",
            decide: { gate in
                let media = token()
                _ = await gate.decide(request(tokens: [media]))
                return await gate.decide(request(tokens: [media]))
            },
            status: .verdict(.tokenReplayed)
        ),
        Row(
            name: "a replay store that cannot answer",
            replay: ReplayStoreFactory.Made(store: RefusingReplayStore()),
            decide: { await $0.decide(request(tokens: [token()])) },
            status: .verdict(.replayCheckUnavailable)
        ),
        Row(
            name: "no expected resource from the proxy",
            decide: { await $0.decide(request(tokens: [token()], resource: nil)) },
            status: .noExpectedResource
        ),
        Row(name: "two different tokens", decide: { await $0.decide(request(tokens: [token(), token()])) }, status: .badRequest),
        Row(
            name: "a single field on two lines",
            decide: { await $0.decide(request(tokens: [token()], doubled: ["X-Original-URI"])) },
            status: .badRequest
        ),
        Row(
            name: "a session the gate issued",
            sessions: true,
            decide: { gate in await gate.decide(request(sessions: [await session(gate)])) },
            status: .validSession
        ),
        Row(
            name: "a session past its lifetime",
            sessions: true,
            decide: { gate in
                let session = await session(gate)
                return await gate.decide(request(sessions: [session], at: now.adding(milliseconds: 14_400_000 + 30_001)!))
            },
            status: .sessionExpired
        ),
        Row(
            name: "a session altered by one character",
            sessions: true,
            decide: { gate in
                var session = await session(gate)
                let last = session.removeLast()
                return await gate.decide(request(sessions: [session + (last == "A" ? "B" : "A")]))
            },
            status: .invalidSession
        ),
        Row(
            name: "a session for another resource",
            sessions: true,
            decide: { gate in
                await gate.decide(request(sessions: [await session(gate)], resource: "CNN"))
            },
            status: .invalidSession
        ),
        Row(
            name: "an invalid token beside a valid session: the valid one wins",
            sessions: true,
            decide: { gate in
                await gate.decide(request(tokens: ["not-a-token"], sessions: [await session(gate)]))
            },
            status: .validSession
        ),
        Row(
            name: "a cookie path the request's path is not under",
            sessions: true,
            decide: { await $0.decide(request(tokens: [token()], cookiePath: "/other/")) },
            status: .badCookiePath
        ),
    ]

    @Test(arguments: rows)
    func theDecisionOfEachRow(_ row: Row) async throws {
        let clock = GateFixtures.Clock()
        clock.set(GateFixtures.at(365 * 86_400_000))
        let secrets = row.sessions ? GateFixtures.temporaryDirectory() : nil
        defer { if let secrets { try? FileManager.default.removeItem(at: secrets) } }
        let sessions = secrets.map { ["--session-secret", GateFixtures.sessionSecret(in: $0)] } ?? []
        let configuration = try GateFixtures.configuration(row.arguments + sessions)
        let runtime = try GateRuntime(
            configuration: configuration,
            logger: LogCapture().logger,
            clock: { clock.read() },
            keyPollInterval: .seconds(60),
            replay: row.replay ?? ReplayStoreFactory.Made(store: InMemoryReplayStore())
        )
        let decision = await row.decide(runtime.gate)
        #expect(decision.status == row.status, "\(decision.reason)")
        #expect(decision.status.httpStatus == Self.httpStatus[decision.status.rawValue], "\(decision.status.rawValue)")
    }

    /// The HTTP status each status answers with (docs/DESIGN.md#endpoints-and-answers), written out here
    /// so that a change of the mapping fails a row.
    static let httpStatus: [String: Int] = [
        "VALID_TOKEN": 200, "VALID_SESSION": 200,
        "NO_TOKEN": 401, "SESSION_EXPIRED": 401, "INVALID_TOKEN_FORMAT": 401, "TOKEN_EXPIRED": 401, "TOKEN_NOT_YET_VALID": 401,
        "INVALID_SESSION": 403, "INVALID_SIGNATURE": 403, "INVALID_REQUESTOR_ID": 403, "INVALID_RESOURCE_ID": 403,
        "UNTRUSTED_MVPD": 403, "DEVICE_MISMATCH": 403, "TOKEN_REPLAYED": 403,
        "REPLAY_CHECK_UNAVAILABLE": 503, "NO_EXPECTED_RESOURCE": 500, "BAD_COOKIE_PATH": 500, "BAD_REQUEST": 400,
    ]

    /// Every status of the auth routes has a row (the CDN exchange's and the
    /// CAT's own have theirs in PlaybackExchangeTests and CATOriginTests).
    @Test func everyStatusOfTheAuthRoutesHasARow() {
        let covered = Set(Self.rows.map(\.status.rawValue))
        let exchangeAndCAT: Set<String> = ["CDN_ISSUE_FAILED", "URL_NOT_COVERED", "IP_MISMATCH", "UNSUPPORTED_CLAIM"]
        #expect(Set(Self.httpStatus.keys).subtracting(covered).isEmpty, "no row for \(Set(Self.httpStatus.keys).subtracting(covered).sorted())")
        #expect(covered.isDisjoint(with: exchangeAndCAT))
        for status in VerificationStatus.allCases {
            #expect(covered.contains(status.rawValue), "no row for \(status.rawValue)")
        }
    }
}
